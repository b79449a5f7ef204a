// The yardstick for scriptscope-cli's fixed cost: the least a LibTorch program can do to print a
// method's graph (one process, LibTorch and the operator library only, no checks). bench_cli times
// the CLI against it.
#include <warp_perspective.h>

#include <torch/script.h>

#include <iostream>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: raw_graph ARCHIVE\n";
        return 2;
    }
    my_ops::ensureRegistered(); // the archives call my_ops::warp_perspective
    auto module = torch::jit::load(argv[1]);
    std::cout << module.get_method("forward").graph()->toString();
    return 0;
}
