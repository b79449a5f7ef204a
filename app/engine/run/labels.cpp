#include "labels.h"

#include <fstream>
#include <sstream>

namespace scriptscope {

// The built-in sets' text, generated from resources/labels/*.txt by CMake (builtin_labels.cpp).
extern const char* const kImagenetLabels;
extern const char* const kCocoLabels;
extern const char* const kVocLabels;

std::string LabelSet::nameOf(int64_t index) const {
    return index >= 0 && static_cast<size_t>(index) < names.size()
               ? names[static_cast<size_t>(index)]
               : std::string();
}

LabelSet labelsFromText(const std::string& name, const std::string& text) {
    LabelSet set;
    set.name = name;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
            line.pop_back();
        }
        set.names.push_back(line);
    }
    while (!set.names.empty() && set.names.back().empty()) {
        set.names.pop_back();
    }
    return set;
}

const LabelSet* builtinLabels(const std::string& key) {
    static const LabelSet imagenet = labelsFromText("ImageNet-1k", kImagenetLabels);
    static const LabelSet coco = labelsFromText("COCO", kCocoLabels);
    static const LabelSet voc = labelsFromText("Pascal VOC", kVocLabels);
    if (key == "imagenet") {
        return &imagenet;
    }
    if (key == "coco") {
        return &coco;
    }
    if (key == "voc") {
        return &voc;
    }
    return nullptr;
}

Expected<LabelSet> readLabelsFile(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        return Error{ErrorKind::File, "cannot read the labels file '" + path + "'"};
    }
    std::stringstream text;
    text << file.rdbuf();
    const auto slash = path.find_last_of('/');
    LabelSet set =
        labelsFromText(slash == std::string::npos ? path : path.substr(slash + 1), text.str());
    if (set.names.empty()) {
        return Error{ErrorKind::Input, "the labels file '" + path + "' has no names"};
    }
    return set;
}

LabelSet labelsFromExtraFiles(const std::map<std::string, std::string>& extraFiles) {
    for (const char* name : {"labels.txt", "classes.txt"}) {
        const auto found = extraFiles.find(name);
        if (found != extraFiles.end()) {
            return labelsFromText(std::string("the archive's ") + name, found->second);
        }
    }
    return {};
}

} // namespace scriptscope
