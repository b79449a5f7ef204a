#include "matrix_io.h"

#include "process_limits.h"

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace scriptscope {
namespace {

Error formatError(const std::string& message) {
    return Error{ErrorKind::Format, message};
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == b;
           });
}

Expected<Homography> finite(const Homography& h, const std::string& where) {
    for (const double v : h) {
        if (!std::isfinite(v)) {
            return formatError(where + ": the matrix has a non-finite entry");
        }
    }
    return h;
}

Expected<Homography> fromJsonArray(const nlohmann::json& value) {
    Homography h{};
    if (value.is_array() && value.size() == 3 &&
        std::all_of(value.begin(), value.end(), [](const nlohmann::json& row) {
            return row.is_array() && row.size() == 3 &&
                   std::all_of(row.begin(), row.end(),
                               [](const nlohmann::json& v) { return v.is_number(); });
        })) {
        for (size_t r = 0; r < 3; ++r) {
            for (size_t c = 0; c < 3; ++c) {
                h[r * 3 + c] = value[r][c].get<double>();
            }
        }
        return finite(h, "JSON");
    }
    if (value.is_array() && value.size() == 9 &&
        std::all_of(value.begin(), value.end(),
                    [](const nlohmann::json& v) { return v.is_number(); })) {
        for (size_t i = 0; i < 9; ++i) {
            h[i] = value[i].get<double>();
        }
        return finite(h, "JSON");
    }
    return formatError("JSON: expected a 3x3 array of numbers (or 9 numbers)");
}

Expected<std::string> readFile(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        return Error{ErrorKind::File, "cannot open '" + path + "': " + std::strerror(errno)};
    }
    std::ostringstream content;
    content << file.rdbuf();
    return content.str();
}

Status writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file || !file.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) ||
        !file.flush()) {
        return Error{ErrorKind::File, "cannot write '" + path + "': " + std::strerror(errno)};
    }
    return std::nullopt;
}

Expected<Homography> fromCvMat(const cv::Mat& mat, const std::string& where) {
    if (mat.rows != 3 || mat.cols != 3 || mat.channels() != 1) {
        return formatError(where + ": the matrix is " + std::to_string(mat.rows) + "x" +
                           std::to_string(mat.cols) + ", not 3x3");
    }
    cv::Mat values;
    mat.convertTo(values, CV_64F);
    Homography h{};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
            h[static_cast<size_t>(r * 3 + c)] = values.at<double>(r, c);
        }
    }
    return finite(h, where);
}

// Whether an opencv-matrix node declares a small matrix: OpenCV allocates rows x cols before it
// reads the data, so a node claiming billions of elements would take all memory (found by
// fuzz_matrix).
bool smallMatrixNode(const cv::FileNode& node) {
    const cv::FileNode rows = node["rows"];
    const cv::FileNode cols = node["cols"];
    if (!rows.isInt() || !cols.isInt()) {
        return false;
    }
    const int r = static_cast<int>(rows);
    const int c = static_cast<int>(cols);
    return r > 0 && c > 0 && r <= 16 && c <= 16;
}

// The node given by name, or else the first 3x3 matrix in the document.
Expected<Homography> matrixFromStorage(cv::FileStorage& storage, const std::string& node,
                                       const std::string& where) {
    if (!node.empty()) {
        const cv::FileNode found = storage[node];
        if (found.empty()) {
            return formatError(where + " has no node named '" + node + "'");
        }
        if (!found.isMap() || !smallMatrixNode(found)) {
            return formatError(where + " node '" + node + "' is not a 3x3 matrix");
        }
        cv::Mat mat;
        found >> mat;
        return fromCvMat(mat, where + " node '" + node + "'");
    }
    const cv::FileNode root = storage.root();
    for (auto it = root.begin(); it != root.end(); ++it) {
        const cv::FileNode child = *it;
        if (!child.isMap() || !smallMatrixNode(child)) {
            continue;
        }
        cv::Mat mat;
        try {
            child >> mat;
        } catch (const cv::Exception&) {
            continue; // a map that is not a matrix
        }
        if (mat.rows == 3 && mat.cols == 3) {
            return fromCvMat(mat, where + " node '" + child.name() + "'");
        }
    }
    return formatError(where + " holds no 3x3 matrix");
}

} // namespace

MatrixFormat matrixFormatForPath(const std::string& path) {
    std::string p = path;
    if (endsWith(p, ".gz")) {
        p.resize(p.size() - 3);
    }
    if (endsWith(p, ".npy")) {
        return MatrixFormat::Npy;
    }
    if (endsWith(p, ".xml")) {
        return MatrixFormat::OpenCvXml;
    }
    if (endsWith(p, ".yml") || endsWith(p, ".yaml")) {
        return MatrixFormat::OpenCvYaml;
    }
    return MatrixFormat::Json;
}

Expected<Homography> parseMatrixJson(const std::string& text) {
    const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
        return formatError("JSON: the file is not valid JSON");
    }
    if (json.is_object()) {
        for (const char* key : {"matrix", "homography", "data"}) {
            if (json.contains(key)) {
                return fromJsonArray(json[key]);
            }
        }
        return formatError("JSON: no \"matrix\" key");
    }
    return fromJsonArray(json);
}

std::string encodeMatrixJson(const Homography& h) {
    nlohmann::json json;
    json["format"] = "scriptscope-homography";
    json["version"] = 1;
    json["maps"] = "source pixels to output pixels, as cv::warpPerspective";
    json["matrix"] = {{h[0], h[1], h[2]}, {h[3], h[4], h[5]}, {h[6], h[7], h[8]}};
    return json.dump(2) + "\n";
}

Expected<Homography> parseNpy(const std::string& bytes) {
    static const std::string magic("\x93NUMPY", 6);
    if (bytes.size() < 10 || bytes.compare(0, 6, magic) != 0) {
        return formatError("NPY: not a NumPy .npy file");
    }
    const auto major = static_cast<unsigned char>(bytes[6]);
    size_t headerLength = 0;
    size_t headerStart = 0;
    if (major == 1) {
        headerLength =
            static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
        headerStart = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) {
            return formatError("NPY: truncated header");
        }
        headerLength = 0;
        for (int i = 3; i >= 0; --i) {
            headerLength =
                (headerLength << 8) | static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)]);
        }
        headerStart = 12;
    } else {
        return formatError("NPY: unsupported format version " + std::to_string(major));
    }
    if (bytes.size() - headerStart < headerLength) {
        return formatError("NPY: truncated header");
    }
    // NumPy's headers for a 3x3 array are about a hundred bytes; a long one is not a matrix, and
    // std::regex's backtracking on a huge header could exhaust the stack.
    if (headerLength > 4096) {
        return formatError("NPY: the header is " + std::to_string(headerLength) +
                           " bytes, far more than a 3x3 array needs");
    }
    const std::string header = bytes.substr(headerStart, headerLength);
    std::smatch m;
    static const std::regex descrRe(R"('descr'\s*:\s*'([<>|=])([fi])(\d+)')");
    static const std::regex fortranRe(R"('fortran_order'\s*:\s*(True|False))");
    static const std::regex shapeRe(R"('shape'\s*:\s*\(\s*(\d+)\s*,\s*(\d+)\s*,?\s*\))");
    if (!std::regex_search(header, m, descrRe)) {
        return formatError("NPY: no dtype in the header");
    }
    const char order = m[1].str()[0];
    const bool isFloat = m[2] == "f";
    // At most two digits: std::stoi on a longer run would throw (found by fuzz_matrix).
    const std::string widthText = m[3].str();
    const int width = widthText.size() <= 2 ? std::stoi(widthText) : 0;
    if (!isFloat || (width != 4 && width != 8)) {
        return formatError("NPY: the matrix must be float32 or float64, got '" + m[2].str() +
                           m[3].str() + "'");
    }
    const bool bigEndian = order == '>';
    if (!std::regex_search(header, m, fortranRe)) {
        return formatError("NPY: no fortran_order in the header");
    }
    const bool fortran = m[1] == "True";
    if (!std::regex_search(header, m, shapeRe) || m[1] != "3" || m[2] != "3") {
        return formatError("NPY: the array must have shape (3, 3)");
    }
    const size_t dataStart = headerStart + headerLength;
    if (bytes.size() - dataStart < static_cast<size_t>(9 * width)) {
        return formatError("NPY: the data is truncated");
    }
    Homography h{};
    for (size_t i = 0; i < 9; ++i) {
        unsigned char raw[8];
        std::memcpy(raw, bytes.data() + dataStart + i * static_cast<size_t>(width),
                    static_cast<size_t>(width));
        if (bigEndian) {
            std::reverse(raw, raw + width);
        }
        double value = 0;
        if (width == 4) {
            float f = 0;
            std::memcpy(&f, raw, 4);
            value = static_cast<double>(f);
        } else {
            std::memcpy(&value, raw, 8);
        }
        const size_t r = fortran ? i % 3 : i / 3;
        const size_t c = fortran ? i / 3 : i % 3;
        h[r * 3 + c] = value;
    }
    return finite(h, "NPY");
}

std::string encodeNpy(const Homography& h) {
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }";
    // NumPy pads the header so the data starts at a multiple of 64 bytes.
    const size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xFF);
    bytes += static_cast<char>((header.size() >> 8) & 0xFF);
    bytes += header;
    bytes.append(reinterpret_cast<const char*>(h.data()), sizeof(double) * 9);
    return bytes;
}

// OpenCV's FileStorage parser is not safe on hostile input (fuzz_matrix crashed OpenCV 4.6's XML
// parser with a SIGSEGV), and matrix files are read in the GUI's own process: the parse runs in a
// forked child with a memory and a time limit, and only nine numbers or a message come back.
template <typename Parse>
Expected<Homography> isolated(const std::string& what, Parse parse) {
    int fds[2];
    if (::pipe(fds) != 0) {
        return parse(); // no pipe: parse here rather than not at all
    }
    const pid_t child = ::fork();
    if (child < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return parse();
    }
    if (child == 0) {
        ::close(fds[0]);
        applyMemoryLimit(512ull << 20);
        ::alarm(10);
        const Expected<Homography> result = parse();
        std::string reply;
        if (result) {
            reply.assign(1, 'H');
            reply.append(reinterpret_cast<const char*>(result->data()), sizeof(Homography));
        } else {
            reply = "E" + result.error().message;
        }
        for (size_t done = 0; done < reply.size();) {
            const ssize_t n = ::write(fds[1], reply.data() + done, reply.size() - done);
            if (n <= 0) {
                break;
            }
            done += static_cast<size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string reply;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        reply.append(buffer, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        return formatError(what + " made OpenCV's FileStorage parser " +
                           (WTERMSIG(status) == SIGALRM
                                ? std::string("hang")
                                : std::string("crash (") + ::strsignal(WTERMSIG(status)) + ")") +
                           ": the file is damaged or hostile");
    }
    if (reply.size() == 1 + sizeof(Homography) && reply[0] == 'H') {
        Homography h{};
        std::memcpy(h.data(), reply.data() + 1, sizeof(Homography));
        return h;
    }
    if (!reply.empty() && reply[0] == 'E') {
        return formatError(reply.substr(1));
    }
    return formatError(what + " could not be read by OpenCV");
}

Expected<Homography> readMatrixFile(const std::string& path, const std::string& node) {
    const auto format = matrixFormatForPath(path);
    if (format == MatrixFormat::Json || format == MatrixFormat::Npy) {
        auto bytes = readFile(path);
        if (!bytes) {
            return bytes.error();
        }
        auto result = format == MatrixFormat::Json ? parseMatrixJson(*bytes) : parseNpy(*bytes);
        if (!result) {
            return formatError("'" + path + "': " + result.error().message);
        }
        return result;
    }
    {
        std::ifstream probe(path);
        if (!probe) {
            return Error{ErrorKind::File, "cannot open '" + path + "': " + std::strerror(errno)};
        }
    }
    return isolated("'" + path + "'", [&]() -> Expected<Homography> {
        try {
            cv::FileStorage storage(path, cv::FileStorage::READ);
            if (!storage.isOpened()) {
                return formatError("'" + path + "' is not an OpenCV FileStorage file");
            }
            return matrixFromStorage(storage, node, "'" + path + "'");
        } catch (const cv::Exception& error) {
            return formatError("'" + path + "' could not be read by OpenCV: " + error.err);
        }
    });
}

Expected<Homography> parseOpenCvMatrixIsolated(const std::string& text, const std::string& node) {
    return isolated("the document", [&]() { return parseOpenCvMatrix(text, node); });
}

Expected<Homography> parseOpenCvMatrix(const std::string& text, const std::string& node) {
    try {
        cv::FileStorage storage(text, cv::FileStorage::READ | cv::FileStorage::MEMORY);
        if (!storage.isOpened()) {
            return formatError("not an OpenCV FileStorage document");
        }
        return matrixFromStorage(storage, node, "the document");
    } catch (const cv::Exception& error) {
        return formatError("OpenCV could not read the document: " + error.err);
    }
}

Status writeMatrixFile(const std::string& path, const Homography& matrix, const std::string& node) {
    switch (matrixFormatForPath(path)) {
    case MatrixFormat::Json:
        return writeFile(path, encodeMatrixJson(matrix));
    case MatrixFormat::Npy:
        return writeFile(path, encodeNpy(matrix));
    case MatrixFormat::OpenCvXml:
    case MatrixFormat::OpenCvYaml:
        try {
            cv::FileStorage storage(path, cv::FileStorage::WRITE);
            if (!storage.isOpened()) {
                return Error{ErrorKind::File, "cannot write '" + path + "'"};
            }
            storage << node << cv::Mat(3, 3, CV_64F, const_cast<double*>(matrix.data()));
            storage.release();
            return std::nullopt;
        } catch (const cv::Exception& error) {
            return Error{ErrorKind::File, "cannot write '" + path + "': " + error.err};
        }
    }
    return std::nullopt;
}

Expected<Homography> homographyFromCorners(int width, int height,
                                           const std::array<double, 8>& corners) {
    if (width < 2 || height < 2) {
        return Error{ErrorKind::Input, "the image must be at least 2x2 pixels"};
    }
    Quad target{};
    for (size_t i = 0; i < 4; ++i) {
        target[i] = Point{corners[2 * i], corners[2 * i + 1]};
    }
    if (auto problem = quadProblem(target)) {
        return Error{ErrorKind::Input, "the corners do not fit: " + *problem};
    }
    return homographyBetween(imageCorners(width, height), target);
}

} // namespace scriptscope
