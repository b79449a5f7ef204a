// What the benchmarks that go through the GUI's worker share: loading an archive there.
#pragma once

#include <worker_client.h>

#include <QEventLoop>

#include <cstdio>
#include <optional>

namespace scriptscope::bench {

// Loads the archive in the worker and waits; nullopt (with the reason on stderr) when it fails.
inline std::optional<ModelInfo> loadInWorker(WorkerClient& worker, const QString& archive) {
    std::optional<ModelInfo> model;
    QEventLoop wait;
    const auto loaded =
        QObject::connect(&worker, &WorkerClient::loaded, [&](quint64, const ModelInfo& info) {
            model = info;
            wait.quit();
        });
    const auto failed =
        QObject::connect(&worker, &WorkerClient::failed, [&](quint64, const Error& error) {
            std::fprintf(stderr, "%s\n", error.message.c_str());
            wait.quit();
        });
    worker.load(archive);
    wait.exec();
    QObject::disconnect(loaded);
    QObject::disconnect(failed);
    if (!model) {
        std::fprintf(stderr, "the archive did not load\n");
    }
    return model;
}

} // namespace scriptscope::bench
