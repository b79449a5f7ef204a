#include "torch_values.h"

#include "engine.h"
#include "format.h"
#include "matrix_io.h"
#include "pickle_value.h"
#include "zip_reader.h"

#include <warp_perspective.h>

#include <caffe2/serialize/inline_container.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <regex>
#include <sstream>

namespace scriptscope::detail {
namespace {

Error inputError(const std::string& message) {
    return Error{ErrorKind::Input, message};
}

Expected<torch::Tensor> imageTensor(const InputSpec& spec, const ImageFrame* frame) {
    const ImagePreprocess& p = spec.image;
    cv::Mat image;
    if (spec.path == kFrameImagePath) {
        // A source's frame (image:-): the pixels the caller decoded, read in place.
        if (!frame || !frame->data) {
            return inputError("image:- takes each frame of a source (--source VIDEO|FOLDER, or "
                              "a source played in the Run workspace); this run has none");
        }
        const cv::Mat view(frame->height, frame->width, CV_8UC3,
                           const_cast<unsigned char*>(frame->data), frame->step);
        if (p.grayscale) {
            cv::cvtColor(view, image, cv::COLOR_BGR2GRAY);
        } else {
            image = view;
        }
    } else {
        try {
            image = cv::imread(spec.path, p.grayscale ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
        } catch (const cv::Exception& error) {
            return inputError("cannot read the image '" + spec.path + "': " + error.err);
        }
    }
    if (image.empty()) {
        return Error{ErrorKind::File,
                     "cannot read the image '" + spec.path +
                         "' (missing, unreadable, or not PNG/JPEG/BMP/TIFF/...)",
                     {}};
    }
    if (p.width > 0 && p.height > 0 && (image.cols != p.width || image.rows != p.height)) {
        const bool shrinking = p.width < image.cols && p.height < image.rows;
        cv::resize(image, image, cv::Size(p.width, p.height), 0, 0,
                   shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
    }
    if (!p.grayscale && p.rgb) {
        cv::cvtColor(image, image, cv::COLOR_BGR2RGB);
    }
    if (!image.isContinuous()) {
        image = image.clone();
    }
    const int64_t channels = image.channels();
    auto dtype = dtypeFromName(p.dtype);
    if (!dtype) {
        return dtype.error();
    }
    // from_blob does not own the pixels: the first conversion below makes the tensor's own copy.
    auto pixels = torch::from_blob(image.data, {image.rows, image.cols, channels}, torch::kUInt8);
    torch::Tensor tensor;
    if (c10::isFloatingType(*dtype)) {
        tensor = pixels.to(torch::kFloat32) * p.scale;
        const auto perChannel = [&](const std::vector<double>& values,
                                    const char* what) -> Expected<torch::Tensor> {
            if (values.size() != 1 && values.size() != static_cast<size_t>(channels)) {
                return inputError(std::string("image ") + what + " needs 1 or " +
                                  std::to_string(channels) + " values, got " +
                                  std::to_string(values.size()));
            }
            return torch::tensor(values, torch::kFloat64).to(torch::kFloat32);
        };
        if (!p.mean.empty()) {
            auto mean = perChannel(p.mean, "mean");
            if (!mean) {
                return mean.error();
            }
            tensor = tensor - *mean;
        }
        if (!p.stddev.empty()) {
            auto stddev = perChannel(p.stddev, "std");
            if (!stddev) {
                return stddev.error();
            }
            tensor = tensor / *stddev;
        }
        tensor = tensor.to(*dtype);
    } else {
        tensor = pixels.to(*dtype, /*non_blocking=*/false, /*copy=*/true);
    }
    if (p.channelsFirst) {
        tensor = tensor.permute({2, 0, 1});
    }
    tensor = tensor.contiguous();
    if (p.batch) {
        tensor = tensor.unsqueeze(0);
    }
    return tensor;
}

} // namespace

std::string dtypeName(c10::ScalarType type) {
    switch (type) {
    case c10::ScalarType::Float:
        return "float32";
    case c10::ScalarType::Double:
        return "float64";
    case c10::ScalarType::Half:
        return "float16";
    case c10::ScalarType::BFloat16:
        return "bfloat16";
    case c10::ScalarType::ComplexHalf:
        return "complex32";
    case c10::ScalarType::ComplexFloat:
        return "complex64";
    case c10::ScalarType::ComplexDouble:
        return "complex128";
    case c10::ScalarType::Long:
        return "int64";
    case c10::ScalarType::Int:
        return "int32";
    case c10::ScalarType::Short:
        return "int16";
    case c10::ScalarType::Char:
        return "int8";
    case c10::ScalarType::Byte:
        return "uint8";
    case c10::ScalarType::Bool:
        return "bool";
    case c10::ScalarType::QInt8:
        return "qint8";
    case c10::ScalarType::QUInt8:
        return "quint8";
    case c10::ScalarType::QInt32:
        return "qint32";
    default:
        return c10::toString(type);
    }
}

Expected<c10::ScalarType> dtypeFromName(const std::string& name) {
    static const std::pair<const char*, c10::ScalarType> table[] = {
        {"float32", c10::ScalarType::Float}, {"float64", c10::ScalarType::Double},
        {"float16", c10::ScalarType::Half},  {"bfloat16", c10::ScalarType::BFloat16},
        {"int64", c10::ScalarType::Long},    {"int32", c10::ScalarType::Int},
        {"int16", c10::ScalarType::Short},   {"int8", c10::ScalarType::Char},
        {"uint8", c10::ScalarType::Byte},    {"bool", c10::ScalarType::Bool},
    };
    for (const auto& [key, value] : table) {
        if (name == key) {
            return value;
        }
    }
    return inputError("unknown dtype '" + name + "'");
}

namespace {

constexpr int kMaxValueDepth = 64;

// The element type a list or dict of these values has: their common type, Any when they have none
// (conformToType refines it against the schema later).
c10::TypePtr commonType(const std::vector<c10::IValue>& values) {
    if (values.empty()) {
        return c10::AnyType::get();
    }
    c10::TypePtr type = values.front().type();
    for (size_t i = 1; i < values.size() && type; ++i) {
        auto unified = c10::unifyTypes(type, values[i].type());
        type = unified ? *unified : nullptr;
    }
    return type ? type : c10::AnyType::get();
}

c10::IValue makeList(const std::vector<c10::IValue>& values) {
    c10::impl::GenericList list(commonType(values));
    list.reserve(values.size());
    for (const auto& v : values) {
        list.push_back(v);
    }
    return list;
}

struct ValueFileReader {
    const ZipReader& zip;
    std::string prefix; // "archive/"
    std::string path;
    std::map<std::string, torch::Tensor> storages; // key -> 1-D tensor over the whole storage

    Error bad(const std::string& why) const {
        return Error{ErrorKind::Input, "cannot read '" + path + "' as a torch.save file: " + why};
    }

    Expected<torch::Tensor> storage(const StorageRef& ref) {
        if (const auto found = storages.find(ref.key); found != storages.end()) {
            return found->second;
        }
        if (ref.dtype.empty()) {
            return bad("its storage type " + ref.type + " is not one LibTorch has");
        }
        auto dtype = dtypeFromName(ref.dtype);
        if (!dtype) {
            return bad("tensors of " + ref.dtype + " cannot be used as inputs");
        }
        const auto* record = zip.find(prefix + "data/" + ref.key);
        if (!record) {
            return bad("the record data/" + ref.key + " for a tensor is missing");
        }
        const uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(ref.numel, 0)) *
                               static_cast<uint64_t>(ref.elementSize);
        if (ref.numel < 0 || record->size < bytes) {
            return bad("the record data/" + ref.key + " is shorter than its tensor");
        }
        auto data = zip.read(*record, record->size);
        if (!data && bytes > 0) {
            return bad("the record data/" + ref.key + " cannot be read (compressed or damaged)");
        }
        auto tensor = torch::empty({ref.numel}, torch::TensorOptions().dtype(*dtype));
        if (bytes > 0) {
            std::memcpy(tensor.data_ptr(), data->data(), static_cast<size_t>(bytes));
        }
        storages.emplace(ref.key, tensor);
        return tensor;
    }

    Expected<c10::IValue> convert(const PickleValue& v, int depth) {
        if (depth > kMaxValueDepth) {
            return bad("its values are nested too deeply");
        }
        switch (v.kind) {
        case PickleValue::Kind::None:
            return c10::IValue();
        case PickleValue::Kind::Bool:
            return c10::IValue(v.boolean);
        case PickleValue::Kind::Int:
            return c10::IValue(v.integer);
        case PickleValue::Kind::Float:
            return c10::IValue(v.number);
        case PickleValue::Kind::String:
            return c10::IValue(v.text);
        case PickleValue::Kind::Bytes:
            return bad("it holds bytes, which TorchScript methods do not take");
        case PickleValue::Kind::Object:
            return bad("it holds " +
                       (v.text == "storage" ? std::string("a bare storage")
                                            : "a Python object of class " + v.text) +
                       ", which only Python can rebuild: save tensors, numbers, strings and "
                       "lists, tuples or dicts of them");
        case PickleValue::Kind::Tensor: {
            auto base = storage(v.storage);
            if (!base) {
                return base.error();
            }
            // Every element the view reaches must lie inside the storage.
            const auto& shape = v.tensor.shape;
            const auto& stride = v.tensor.stride;
            int64_t last = v.tensor.offset;
            bool empty = false;
            for (size_t i = 0; i < shape.size(); ++i) {
                if (shape[i] < 0 || stride[i] < 0) {
                    return bad("a tensor has a negative size or stride");
                }
                empty = empty || shape[i] == 0;
                if (shape[i] > 0 && stride[i] > 0 &&
                    (shape[i] - 1) > (std::numeric_limits<int64_t>::max() - last) / stride[i]) {
                    return bad("a tensor reaches past its storage");
                }
                last += shape[i] > 0 ? (shape[i] - 1) * stride[i] : 0;
            }
            if (v.tensor.offset < 0 || (!empty && last >= base->numel())) {
                return bad("a tensor reaches past its storage");
            }
            auto tensor = base->as_strided(shape, stride, v.tensor.offset);
            if (v.requiresGrad && c10::isFloatingType(tensor.scalar_type())) {
                tensor = tensor.detach().requires_grad_(false); // inputs run without autograd
            }
            return c10::IValue(tensor);
        }
        case PickleValue::Kind::List:
        case PickleValue::Kind::Tuple: {
            std::vector<c10::IValue> elements;
            elements.reserve(v.items.size());
            for (const auto& item : v.items) {
                auto e = convert(*item, depth + 1);
                if (!e) {
                    return e.error();
                }
                elements.push_back(std::move(e).value());
            }
            if (v.kind == PickleValue::Kind::Tuple) {
                return c10::IValue(c10::ivalue::Tuple::create(std::move(elements)));
            }
            return makeList(elements);
        }
        case PickleValue::Kind::Dict: {
            std::vector<c10::IValue> keys, values;
            for (size_t i = 0; i + 1 < v.items.size(); i += 2) {
                auto key = convert(*v.items[i], depth + 1);
                if (!key) {
                    return key.error();
                }
                if (!key->isString() && !key->isInt() && !key->isDouble() && !key->isBool() &&
                    !key->isTensor()) {
                    return bad("a dict has a key that TorchScript dicts cannot have");
                }
                auto value = convert(*v.items[i + 1], depth + 1);
                if (!value) {
                    return value.error();
                }
                keys.push_back(std::move(key).value());
                values.push_back(std::move(value).value());
            }
            c10::impl::GenericDict dict(commonType(keys), commonType(values));
            if (dict.keyType()->kind() == c10::TypeKind::AnyType && !keys.empty()) {
                return bad("a dict mixes keys of different types");
            }
            for (size_t i = 0; i < keys.size(); ++i) {
                dict.insert_or_assign(keys[i], values[i]);
            }
            return c10::IValue(dict);
        }
        }
        return bad("it holds a value of an unknown kind");
    }
};

} // namespace

Status saveValueFile(const c10::IValue& value, const std::string& path) {
    const auto bytes = saveValueBytes(toCpu(value));
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file || !file.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) ||
        !file.flush()) {
        return Error{ErrorKind::File, "cannot write '" + path + "'"};
    }
    return std::nullopt;
}

namespace {

// Lists as Python's plain lists. The Pickler writes List[Tensor], List[int], List[float] and
// List[bool] through torch.jit._pickle.build_tensorlist (build_intlist, ...), which torch.load
// refuses from PyTorch 2.6 on (weights_only: "Unsupported global"); a list of Any is written as
// a list. Tuples and dicts keep their shape, their elements converted alike.
c10::IValue withPlainLists(const c10::IValue& value) {
    if (value.isList()) {
        c10::impl::GenericList plain(c10::AnyType::get());
        const auto list = value.toList();
        plain.reserve(list.size());
        for (const auto& e : list) {
            plain.push_back(withPlainLists(e));
        }
        return plain;
    }
    if (value.isTuple()) {
        std::vector<c10::IValue> elements;
        for (const auto& e : value.toTupleRef().elements()) {
            elements.push_back(withPlainLists(e));
        }
        return c10::ivalue::Tuple::create(std::move(elements));
    }
    if (value.isGenericDict()) {
        const auto dict = value.toGenericDict();
        c10::impl::GenericDict plain(dict.keyType(), c10::AnyType::get());
        for (const auto& entry : dict) {
            plain.insert(entry.key(), withPlainLists(entry.value()));
        }
        return plain;
    }
    return value;
}

} // namespace

std::vector<char> saveValueBytes(const c10::IValue& input) {
    const c10::IValue value = withPlainLists(input);
    std::vector<char> pickle;
    torch::jit::Pickler pickler(
        [&](const char* bytes, size_t size) { pickle.insert(pickle.end(), bytes, bytes + size); },
        nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(value);
    pickler.stop();
    std::vector<char> archive;
    {
        caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
            const char* bytes = static_cast<const char*>(data);
            archive.insert(archive.end(), bytes, bytes + size);
            return size;
        });
        torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(),
                                           pickler.tensorData(), writer);
    } // the writer's destructor writes the zip's central directory
    return archive;
}

Expected<c10::IValue> loadValueFile(const std::string& path) {
    {
        std::ifstream probe(path, std::ios::binary);
        if (!probe) {
            return Error{ErrorKind::File, "cannot open '" + path + "': " + std::strerror(errno)};
        }
    }
    ZipReader zip(path);
    if (!zip.ok()) {
        return Error{ErrorKind::Input,
                     "cannot read '" + path + "' as a torch.save file: " + zip.error() +
                         " (files saved with _use_new_zipfile_serialization=False are not read: "
                         "save them again with torch.save's default)"};
    }
    const ArchiveRecord* data = nullptr;
    for (const auto& record : zip.records()) {
        const auto slash = record.name.find('/');
        if (slash != std::string::npos &&
            record.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
            data = &record;
            break;
        }
    }
    if (!data) {
        return Error{ErrorKind::Input, "cannot read '" + path +
                                           "' as a torch.save file: it has no data.pkl (a "
                                           "TorchScript archive is a model, not an input)"};
    }
    const auto pickle = zip.read(*data, kMaxValuePickleBytes);
    if (!pickle) {
        return Error{ErrorKind::Input,
                     "cannot read '" + path + "': its data.pkl is damaged or too large"};
    }
    const auto parsed = readPickle(*pickle);
    if (!parsed.value) {
        return Error{ErrorKind::Input,
                     "cannot read '" + path + "' as a torch.save file: " + parsed.error};
    }
    ValueFileReader reader{zip, data->name.substr(0, data->name.size() - 8), path, {}};
    try {
        return reader.convert(*parsed.value, 0);
    } catch (const std::exception& error) {
        Error e = errorFromException(error, ErrorKind::Input);
        e.message = "cannot read '" + path + "' as a torch.save file: " + e.message;
        return e;
    }
}

Expected<c10::IValue> conformToType(const c10::IValue& value, const c10::TypePtr& type,
                                    const std::string& where, int depth) {
    auto mismatch = [&](const std::string& detail = std::string()) -> Error {
        return inputError(where + " is " + value.type()->annotation_str() + ", not " +
                          type->annotation_str() + detail);
    };
    if (depth > kMaxValueDepth) {
        return inputError(where + " is nested too deeply");
    }
    switch (type->kind()) {
    case c10::TypeKind::AnyType:
        return value;
    case c10::TypeKind::OptionalType:
        if (value.isNone()) {
            return value;
        }
        return conformToType(value, type->expectRef<c10::OptionalType>().getElementType(), where,
                             depth + 1);
    case c10::TypeKind::FloatType:
        if (value.isInt()) {
            return c10::IValue(static_cast<double>(value.toInt()));
        }
        break;
    case c10::TypeKind::ListType: {
        if (!value.isList()) {
            break;
        }
        const auto element = type->expectRef<c10::ListType>().getElementType();
        c10::impl::GenericList list(element);
        const auto items = value.toListRef();
        list.reserve(items.size());
        for (size_t i = 0; i < items.size(); ++i) {
            auto e =
                conformToType(items[i], element, where + "[" + std::to_string(i) + "]", depth + 1);
            if (!e) {
                return e.error();
            }
            list.push_back(std::move(e).value());
        }
        return c10::IValue(list);
    }
    case c10::TypeKind::TupleType: {
        if (!value.isTuple()) {
            break;
        }
        const auto& tupleType = type->expectRef<c10::TupleType>();
        const auto& items = value.toTupleRef().elements();
        if (items.size() != tupleType.elements().size()) {
            return mismatch(" (" + std::to_string(items.size()) + " element" +
                            (items.size() == 1 ? "" : "s") + ", it takes " +
                            std::to_string(tupleType.elements().size()) + ")");
        }
        std::vector<c10::IValue> elements;
        for (size_t i = 0; i < items.size(); ++i) {
            auto e = conformToType(items[i], tupleType.elements()[i],
                                   where + "[" + std::to_string(i) + "]", depth + 1);
            if (!e) {
                return e.error();
            }
            elements.push_back(std::move(e).value());
        }
        if (tupleType.schema()) { // a NamedTuple keeps its type
            return c10::IValue(c10::ivalue::Tuple::createNamed(std::move(elements),
                                                               type->expect<c10::TupleType>()));
        }
        return c10::IValue(c10::ivalue::Tuple::create(std::move(elements)));
    }
    case c10::TypeKind::DictType: {
        if (!value.isGenericDict()) {
            break;
        }
        const auto& dictType = type->expectRef<c10::DictType>();
        c10::impl::GenericDict dict(dictType.getKeyType(), dictType.getValueType());
        for (const auto& entry : value.toGenericDict()) {
            const std::string at = where + "[" + previewValue(entry.key(), 40) + "]";
            auto key =
                conformToType(entry.key(), dictType.getKeyType(), "a key of " + where, depth + 1);
            if (!key) {
                return key.error();
            }
            auto v = conformToType(entry.value(), dictType.getValueType(), at, depth + 1);
            if (!v) {
                return v.error();
            }
            dict.insert_or_assign(std::move(key).value(), std::move(v).value());
        }
        return c10::IValue(dict);
    }
    default:
        break;
    }
    if (value.type()->isSubtypeOf(*type)) {
        return value;
    }
    return mismatch();
}

Expected<c10::IValue> buildInput(const InputSpec& spec, const ImageFrame* frame) {
    try {
        switch (spec.kind) {
        case InputSpec::Kind::Random:
        case InputSpec::Kind::Zeros:
        case InputSpec::Kind::Ones: {
            auto dtype = dtypeFromName(spec.dtype);
            if (!dtype) {
                return dtype.error();
            }
            const auto options = torch::TensorOptions().dtype(*dtype);
            if (spec.kind == InputSpec::Kind::Zeros) {
                return c10::IValue(torch::zeros(spec.shape, options));
            }
            if (spec.kind == InputSpec::Kind::Ones) {
                return c10::IValue(torch::ones(spec.shape, options));
            }
            // Seeded, so that a run can be repeated and compared with Python's.
            auto generator = at::detail::createCPUGenerator(spec.seed);
            if (c10::isFloatingType(*dtype)) {
                return c10::IValue(torch::randn(spec.shape, generator, torch::kFloat32).to(*dtype));
            }
            const int64_t high = *dtype == c10::ScalarType::Bool ? 2 : 10;
            return c10::IValue(torch::randint(0, high, spec.shape, generator, options));
        }
        case InputSpec::Kind::Image: {
            auto tensor = imageTensor(spec, frame);
            if (!tensor) {
                return tensor.error();
            }
            return c10::IValue(*tensor);
        }
        case InputSpec::Kind::File:
            return loadValueFile(spec.path);
        case InputSpec::Kind::Matrix: {
            if (spec.path.empty()) {
                if (spec.floatList.size() != 9) {
                    return inputError("a matrix needs a file or nine values, got " +
                                      std::to_string(spec.floatList.size()) + " value(s)");
                }
                return c10::IValue(torch::tensor(spec.floatList, torch::kFloat64)
                                       .reshape({3, 3})
                                       .to(torch::kFloat32));
            }
            auto matrix = readMatrixFile(spec.path, spec.node);
            if (!matrix) {
                return matrix.error();
            }
            return c10::IValue(
                torch::tensor(std::vector<double>(matrix->begin(), matrix->end()), torch::kFloat64)
                    .reshape({3, 3})
                    .to(torch::kFloat32));
        }
        case InputSpec::Kind::Int:
            return c10::IValue(spec.intValue);
        case InputSpec::Kind::Float:
            return c10::IValue(spec.floatValue);
        case InputSpec::Kind::Bool:
            return c10::IValue(spec.boolValue);
        case InputSpec::Kind::String:
            return c10::IValue(spec.stringValue);
        case InputSpec::Kind::None:
            return c10::IValue();
        case InputSpec::Kind::IntList:
            return c10::IValue(c10::List<int64_t>(spec.intList));
        case InputSpec::Kind::FloatList:
            return c10::IValue(c10::List<double>(spec.floatList));
        case InputSpec::Kind::Sample:
            // A .pt2's run takes these (runExported); a TorchScript archive has none.
            return inputError("'sample' is the example input a torch.export archive (.pt2) keeps; "
                              "this model has none: give its inputs");
        case InputSpec::Kind::List:
        case InputSpec::Kind::Tuple:
        case InputSpec::Kind::Dict: {
            std::vector<c10::IValue> elements;
            for (size_t i = 0; i < spec.elements.size(); ++i) {
                auto element = buildInput(spec.elements[i], frame);
                if (!element) {
                    Error e = element.error();
                    e.message = (spec.kind == InputSpec::Kind::Dict && i < spec.keys.size()
                                     ? "entry '" + spec.keys[i] + "'"
                                     : "element " + std::to_string(i)) +
                                ": " + e.message;
                    return e;
                }
                elements.push_back(std::move(element).value());
            }
            if (spec.kind == InputSpec::Kind::Tuple) {
                return c10::IValue(c10::ivalue::Tuple::create(std::move(elements)));
            }
            if (spec.kind == InputSpec::Kind::List) {
                return makeList(elements);
            }
            if (spec.keys.size() != elements.size()) {
                return inputError("a dict needs one key per value");
            }
            c10::impl::GenericDict dict(c10::StringType::get(), commonType(elements));
            for (size_t i = 0; i < elements.size(); ++i) {
                dict.insert_or_assign(spec.keys[i], elements[i]);
            }
            return c10::IValue(dict);
        }
        }
    } catch (const std::exception& error) {
        return errorFromException(error, ErrorKind::Input);
    }
    return inputError("unknown input kind");
}

namespace {

c10::IValue nested(const PytreeSpec& spec, const std::vector<c10::IValue>& flat, size_t& next) {
    switch (spec.kind) {
    case PytreeSpec::Kind::Leaf:
        return flat[next++];
    case PytreeSpec::Kind::None:
        return c10::IValue();
    case PytreeSpec::Kind::List: {
        c10::impl::GenericList list(c10::AnyType::get());
        for (const PytreeSpec& child : spec.children) {
            list.push_back(nested(child, flat, next));
        }
        return list;
    }
    case PytreeSpec::Kind::Dict: {
        // Keys as Python wrote them: an int key that reads as one stays an int.
        bool ints = !spec.keys.empty();
        for (const std::string& key : spec.keys) {
            ints = ints && !key.empty() &&
                   key.find_first_not_of("-0123456789") == std::string::npos && key != "-";
        }
        c10::impl::GenericDict dict(ints ? c10::TypePtr(c10::IntType::get())
                                         : c10::TypePtr(c10::StringType::get()),
                                    c10::AnyType::get());
        for (size_t i = 0; i < spec.children.size(); ++i) {
            c10::IValue value = nested(spec.children[i], flat, next);
            if (ints) {
                dict.insert(static_cast<int64_t>(std::stoll(spec.keys[i])), std::move(value));
            } else {
                dict.insert(spec.keys[i], std::move(value));
            }
        }
        return dict;
    }
    case PytreeSpec::Kind::Tuple:
    case PytreeSpec::Kind::Other: {
        std::vector<c10::IValue> elements;
        for (const PytreeSpec& child : spec.children) {
            elements.push_back(nested(child, flat, next));
        }
        return c10::ivalue::Tuple::create(std::move(elements));
    }
    }
    return c10::IValue();
}

} // namespace

Expected<c10::IValue> nestOutputs(const PytreeSpec& spec, const std::vector<c10::IValue>& flat) {
    const size_t leaves = spec.leaves();
    if (leaves != flat.size()) {
        return Error{ErrorKind::Format, "the output spec holds " + std::to_string(leaves) +
                                            " values, the program returns " +
                                            std::to_string(flat.size())};
    }
    size_t next = 0;
    return nested(spec, flat, next);
}

OutputValue describeOutput(const c10::IValue& value, size_t previewValues, size_t valuesLimit) {
    OutputValue out;
    if (value.isNone()) {
        out.kind = OutputValue::Kind::None;
        out.text = "None";
    } else if (value.isTensor()) {
        out.kind = OutputValue::Kind::Tensor;
        const auto& tensor = value.toTensor();
        out.dtype = dtypeName(tensor.scalar_type());
        out.device = tensor.device().str();
        out.shape = tensor.sizes().vec();
        out.numel = tensor.numel();
        out.text = "Tensor" + formatShape(tensor.sizes().vec()) + " " + out.dtype;
        if (tensor.numel() > 0 && !tensor.is_complex() && tensor.layout() == torch::kStrided &&
            !tensor.is_quantized()) {
            const auto values = tensor.detach().to(torch::kCPU).to(torch::kFloat64).reshape({-1});
            const auto nan = torch::isnan(values);
            const auto inf = torch::isinf(values);
            out.nanCount = nan.sum().item<int64_t>();
            out.infCount = inf.sum().item<int64_t>();
            const auto finite = values.masked_select(torch::isfinite(values));
            if (finite.numel() > 0) {
                out.min = finite.min().item<double>();
                out.max = finite.max().item<double>();
                out.mean = finite.mean().item<double>();
                out.stddev = finite.std(/*unbiased=*/false).item<double>();
            }
            const auto count =
                std::min<int64_t>(static_cast<int64_t>(previewValues), values.numel());
            const double* data = values.data_ptr<double>();
            out.preview.assign(data, data + count);
            if (static_cast<size_t>(values.numel()) <= valuesLimit) {
                const auto floats = values.to(torch::kFloat32).contiguous();
                out.values.assign(floats.data_ptr<float>(),
                                  floats.data_ptr<float>() + floats.numel());
            }
        }
    } else if (value.isInt()) {
        out.kind = OutputValue::Kind::Int;
        out.text = std::to_string(value.toInt());
    } else if (value.isDouble()) {
        out.kind = OutputValue::Kind::Float;
        out.text = formatPythonFloat(value.toDouble());
    } else if (value.isBool()) {
        out.kind = OutputValue::Kind::Bool;
        out.text = value.toBool() ? "True" : "False";
    } else if (value.isString()) {
        out.kind = OutputValue::Kind::String;
        out.text = value.toStringRef();
    } else if (value.isTuple() || value.isList()) {
        out.kind = value.isTuple() ? OutputValue::Kind::Tuple : OutputValue::Kind::List;
        const auto elements =
            value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
        for (size_t i = 0; i < elements.size(); ++i) {
            out.children.push_back(describeOutput(elements[i], previewValues, valuesLimit));
            out.children.back().key = std::to_string(i);
        }
        out.text = (value.isTuple() ? "tuple of " : "list of ") + std::to_string(elements.size());
    } else if (value.isGenericDict()) {
        out.kind = OutputValue::Kind::Dict;
        for (const auto& entry : value.toGenericDict()) {
            out.children.push_back(describeOutput(entry.value(), previewValues, valuesLimit));
            out.children.back().key = previewValue(entry.key(), 40);
        }
        out.text = "dict of " + std::to_string(out.children.size());
    } else {
        out.kind = OutputValue::Kind::Other;
        out.text = previewValue(value);
    }
    return out;
}

c10::IValue toDevice(const c10::IValue& value, const c10::Device& device) {
    if (value.isTensor()) {
        return value.toTensor().to(device);
    }
    if (value.isTuple()) {
        std::vector<c10::IValue> elements;
        for (const auto& e : value.toTupleRef().elements()) {
            elements.push_back(toDevice(e, device));
        }
        const auto type = value.type()->cast<c10::TupleType>();
        if (type && type->schema()) {
            return c10::ivalue::Tuple::createNamed(std::move(elements), type);
        }
        return c10::ivalue::Tuple::create(std::move(elements));
    }
    if (value.isList()) {
        auto list = value.toList();
        c10::impl::GenericList copy(list.elementType());
        copy.reserve(list.size());
        for (const auto& e : list) {
            copy.push_back(toDevice(e, device));
        }
        return copy;
    }
    if (value.isGenericDict()) {
        auto dict = value.toGenericDict();
        c10::impl::GenericDict copy(dict.keyType(), dict.valueType());
        for (const auto& entry : dict) {
            copy.insert(entry.key(), toDevice(entry.value(), device));
        }
        return copy;
    }
    return value;
}

c10::IValue toCpu(const c10::IValue& value) {
    return toDevice(value, c10::Device(c10::kCPU));
}

std::string previewValue(const c10::IValue& value, size_t maxLength) {
    std::string text;
    if (value.isTensor()) {
        const auto& t = value.toTensor();
        text = t.defined()
                   ? "Tensor" + formatShape(t.sizes().vec()) + " " + dtypeName(t.scalar_type())
                   : "Tensor (undefined)";
    } else if (value.isNone()) {
        text = "None";
    } else if (value.isBool()) {
        text = value.toBool() ? "True" : "False";
    } else if (value.isInt()) {
        text = std::to_string(value.toInt());
    } else if (value.isDouble()) {
        text = formatPythonFloat(value.toDouble());
    } else if (value.isString()) {
        text = "'" + value.toStringRef() + "'";
    } else if (value.isList() || value.isTuple()) {
        const auto elements =
            value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
        text = value.isTuple() ? "(" : "[";
        for (size_t i = 0; i < elements.size() && text.size() < maxLength; ++i) {
            text += (i ? ", " : "") + previewValue(elements[i], maxLength);
        }
        if (value.isTuple() && elements.size() == 1) {
            text += ",";
        }
        text += value.isTuple() ? ")" : "]";
    } else if (value.isGenericDict()) {
        text = "{";
        size_t i = 0;
        for (const auto& entry : value.toGenericDict()) {
            if (text.size() >= maxLength) {
                break;
            }
            text += (i++ ? ", " : "") + previewValue(entry.key(), maxLength) + ": " +
                    previewValue(entry.value(), maxLength);
        }
        text += "}";
    } else if (value.isDevice()) {
        text = "device('" + value.toDevice().str() + "')";
    } else if (value.isObject()) {
        text = "<" + value.type()->annotation_str() + " object>";
    } else {
        text = value.type()->annotation_str();
    }
    if (text.size() > maxLength) {
        text = text.substr(0, maxLength > 3 ? maxLength - 3 : 0) + "...";
    }
    return text;
}

std::string summarizeTorchMessage(const std::string& message) {
    std::vector<std::string> lines;
    std::istringstream stream(message);
    for (std::string line; std::getline(stream, line);) {
        if (line.find_first_not_of(" \t") != std::string::npos) {
            lines.push_back(line);
        }
    }
    if (lines.empty()) {
        return message;
    }
    // The interpreter's tracebacks end with the exception itself: "RuntimeError: ...". LibTorch
    // 2.x may put a note before the traceback ("Device-side assertions were explicitly omitted")
    // and hints after the exception ("Search for `cudaError...`"): the exception's line is the
    // last one that names one.
    const auto traceback = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
        return line.rfind("The following operation failed in the TorchScript interpreter", 0) == 0;
    });
    if (traceback != lines.end()) {
        static const std::regex exception(R"re(^[A-Za-z_][\w.]*(Error|Exception): )re");
        for (auto it = lines.rbegin(); it != std::make_reverse_iterator(traceback); ++it) {
            if (std::regex_search(*it, exception)) {
                return *it;
            }
        }
        return lines.back();
    }
    // Compilation errors name the place in the archive's code.
    static const std::regex place(R"re(File "([^"]+)", line (\d+))re");
    std::smatch match;
    if (lines.size() > 1 && std::regex_search(message, match, place)) {
        return lines.front() + " (" + match[1].str() + ", line " + match[2].str() + ")";
    }
    return lines.front();
}

Error errorFromException(const std::exception& error, ErrorKind fallback) {
    std::string message;
    if (const auto* c10Error = dynamic_cast<const c10::Error*>(&error)) {
        message = c10Error->what_without_backtrace();
    } else {
        message = error.what();
    }
    while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) {
        message.pop_back();
    }
    Error result{fallback, summarizeTorchMessage(message), message};
    if (result.details == result.message) {
        result.details.clear();
    }
    if (dynamic_cast<const std::bad_alloc*>(&error) ||
        message.find("can't allocate memory") != std::string::npos ||
        message.find("out of memory") != std::string::npos) {
        result.kind = ErrorKind::OutOfMemory;
        return result;
    }
    // Code that hard-codes CUDA (x.cuda(), device="cuda") on a LibTorch or machine without it.
    for (const char* noCuda :
         {"not linked with support for cuda", "Torch not compiled with CUDA",
          "Cannot initialize CUDA without", "Found no NVIDIA driver", "no CUDA GPUs are available",
          "CUDA driver version is insufficient for CUDA runtime version"}) {
        if (message.find(noCuda) != std::string::npos) {
            result.kind = ErrorKind::Device;
            result.message = "the model's code uses CUDA (e.g. .cuda() or device='cuda'), but " +
                             std::string(torch::cuda::is_available()
                                             ? "CUDA failed here"
                                             : "this LibTorch or this machine has no CUDA") +
                             ": run it where CUDA is available, or export it without the "
                             "hard-coded device (" +
                             summarizeTorchMessage(message) + ")";
            return result;
        }
    }
    static const std::regex unknownOp(R"(Unknown builtin op: ([A-Za-z_][\w]*::[A-Za-z_][\w.]*))");
    std::smatch match;
    if (std::regex_search(message, match, unknownOp)) {
        result.kind = ErrorKind::MissingOperator;
        result.operatorName = match[1].str();
        if (!result.operatorName.empty() && result.operatorName.back() == '.') {
            result.operatorName.pop_back();
        }
    }
    return result;
}

} // namespace scriptscope::detail

namespace scriptscope {

Status warpImageFile(const WarpFileRequest& request) {
    cv::Mat image;
    try {
        image = cv::imread(request.input, cv::IMREAD_UNCHANGED);
    } catch (const cv::Exception& error) {
        return Error{ErrorKind::File,
                     "cannot read the image '" + request.input + "': " + error.err};
    }
    if (image.empty()) {
        return Error{ErrorKind::File,
                     "cannot read the image '" + request.input +
                         "' (missing, unreadable, or not an image OpenCV reads)",
                     {}};
    }
    std::vector<double> matrix = request.matrix;
    if (request.corners) {
        auto fromCorners = homographyFromCorners(image.cols, image.rows, *request.corners);
        if (!fromCorners) {
            return fromCorners.error();
        }
        matrix.assign(fromCorners->begin(), fromCorners->end());
    }
    if (matrix.size() != 9) {
        return Error{ErrorKind::Input, "the matrix needs 9 values"};
    }
    // 16-bit images are warped as float and written back at their own depth.
    const int originalDepth = image.depth();
    if (originalDepth != CV_8U && originalDepth != CV_32F && originalDepth != CV_64F) {
        image.convertTo(image, CV_32F);
    }
    if (!image.isContinuous()) {
        image = image.clone();
    }
    try {
        const auto dtype = image.depth() == CV_8U    ? torch::kUInt8
                           : image.depth() == CV_32F ? torch::kFloat32
                                                     : torch::kFloat64;
        const auto pixels =
            image.channels() == 1
                ? torch::from_blob(image.data, {image.rows, image.cols}, dtype)
                : torch::from_blob(image.data, {image.rows, image.cols, image.channels()}, dtype);
        const auto warp = torch::tensor(matrix, torch::kFloat64).reshape({3, 3});
        my_ops::WarpOptions options;
        if (request.width > 0 && request.height > 0) {
            options.size = std::array<int64_t, 2>{request.height, request.width};
        }
        options.interpolation = my_ops::parseInterpolation(request.interpolation);
        options.border = my_ops::parseBorderMode(request.border);
        options.border_value = request.borderValue;
        options.inverse = request.inverse;
        const auto output = my_ops::warp_perspective(pixels, warp, options);
        cv::Mat result(static_cast<int>(output.size(0)), static_cast<int>(output.size(1)),
                       CV_MAKETYPE(image.depth(), image.channels()), output.data_ptr());
        if (originalDepth != image.depth()) {
            result.convertTo(result, originalDepth);
        }
        if (!cv::imwrite(request.output, result)) {
            return Error{ErrorKind::File,
                         "cannot write '" + request.output +
                             "' (unknown extension, or the folder is not writable)",
                         {}};
        }
    } catch (const cv::Exception& error) {
        return Error{ErrorKind::File, "cannot write '" + request.output + "': " + error.err};
    } catch (const std::exception& error) {
        return detail::errorFromException(error, ErrorKind::Input);
    }
    return std::nullopt;
}

} // namespace scriptscope
