// Parsing of the argument specs the CLI (and later the GUI's saved settings) use:
//   random:1x3x224x224[:dtype]  zeros:2x3:int64  ones:4  image:photo.png[,option=value...]
//   file:x.pt  matrix:h.npy[#node]  3  3.5  true  false  none  str:text  ints:1,2,3  floats:0.5,1.5
//   sample[:N] (a .pt2's own example input for this argument, or for argument N)
// Image options: size=WxH, order=rgb|bgr, layout=chw|hwc, batch=0|1, dtype=float32|uint8|...,
//   scale=1/255 (or a number), mean=a/b/c, std=a/b/c, gray=1, preset=imagenet (RGB, 1/255,
//   ImageNet's mean and std, and 224x224 unless size= is given).
// Containers: list:SPEC;SPEC;...  tuple:SPEC;SPEC  dict:KEY=SPEC;KEY=SPEC, each element any spec
//   (image options apply to their own element); [..] around an element nests containers:
//   list:[list:random:2;random:3];random:4. "list:" alone is an empty list.
#pragma once

#include "error.h"
#include "run_types.h"

#include <string>

namespace scriptscope {

constexpr int kImageNetSize = 224;

Expected<InputSpec> parseInputSpec(const std::string& text);

// "1x3x224x224" -> {1, 3, 224, 224}
Expected<std::vector<int64_t>> parseShape(const std::string& text);

// The first image among the specs, looking into containers (a detector's list of images); what
// a rendered result is drawn over. nullptr when there is none.
const InputSpec* firstImageInput(const std::vector<InputSpec>& specs);

bool isKnownDtype(const std::string& dtype);

// No inputs given (no specs, no file), or 'sample' for every argument: the run is on the model's
// own example inputs. Two models compared then run on the example inputs one of them keeps.
bool onSampleInputs(const RunRequest& request);

} // namespace scriptscope
