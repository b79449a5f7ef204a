// Class names by index: the label sets built in (ImageNet-1k, COCO, Pascal VOC), a labels file, an
// archive's own labels.txt. Plain C++.
#pragma once

#include "error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace scriptscope {

struct LabelSet {
    std::string name;               // "ImageNet-1k", "COCO", "Pascal VOC", or the file's name
    std::vector<std::string> names; // by class index
    std::string nameOf(int64_t index) const;
};

// The sets built in (from torchvision's metadata, resources/labels/make_labels.py): "imagenet",
// "coco", "voc"; nullptr for another name.
const LabelSet* builtinLabels(const std::string& key);
// One name per line, in index order (blank lines kept as empty names; a trailing one dropped).
LabelSet labelsFromText(const std::string& name, const std::string& text);
Expected<LabelSet> readLabelsFile(const std::string& path);
// An archive's own labels: the extra file labels.txt (or classes.txt), one name per line.
// Empty names when it has none.
LabelSet labelsFromExtraFiles(const std::map<std::string, std::string>& extraFiles);

} // namespace scriptscope
