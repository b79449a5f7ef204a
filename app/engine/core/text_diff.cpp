#include "text_diff.h"

#include <algorithm>

namespace scriptscope {

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            lines.push_back(text.substr(start));
            break;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

namespace {

// The shortest edit script between a[a0, a1) and b[b0, b1), appended to out. Myers' greedy
// algorithm, keeping every V (memory O(D^2)), walking back through them.
bool myers(const std::vector<std::string>& a, size_t a0, size_t a1,
           const std::vector<std::string>& b, size_t b0, size_t b1, int maxEdits,
           std::vector<DiffLine>& out) {
    const int n = static_cast<int>(a1 - a0);
    const int m = static_cast<int>(b1 - b0);
    const int limit = std::min(n + m, maxEdits);
    const int offset = limit + 1;
    std::vector<int> v(static_cast<size_t>(2 * limit + 3), 0);
    std::vector<std::vector<int>> trace;
    int found = -1;
    for (int d = 0; d <= limit && found < 0; ++d) {
        trace.push_back(v);
        for (int k = -d; k <= d; k += 2) {
            int x;
            if (k == -d || (k != d && v[static_cast<size_t>(k - 1 + offset)] <
                                          v[static_cast<size_t>(k + 1 + offset)])) {
                x = v[static_cast<size_t>(k + 1 + offset)];
            } else {
                x = v[static_cast<size_t>(k - 1 + offset)] + 1;
            }
            int y = x - k;
            while (x < n && y < m &&
                   a[a0 + static_cast<size_t>(x)] == b[b0 + static_cast<size_t>(y)]) {
                ++x;
                ++y;
            }
            v[static_cast<size_t>(k + offset)] = x;
            if (x >= n && y >= m) {
                found = d;
                break;
            }
        }
    }
    if (found < 0) {
        return false;
    }
    // Walk back from (n, m) through the kept Vs.
    std::vector<DiffLine> reversed;
    int x = n, y = m;
    for (int d = found; d > 0; --d) {
        const std::vector<int>& pv = trace[static_cast<size_t>(d)];
        const int k = x - y;
        int prevK;
        if (k == -d || (k != d && pv[static_cast<size_t>(k - 1 + offset)] <
                                      pv[static_cast<size_t>(k + 1 + offset)])) {
            prevK = k + 1;
        } else {
            prevK = k - 1;
        }
        const int prevX = pv[static_cast<size_t>(prevK + offset)];
        const int prevY = prevX - prevK;
        while (x > prevX && y > prevY) {
            --x;
            --y;
            reversed.push_back({DiffLine::Op::Same, a[a0 + static_cast<size_t>(x)],
                                static_cast<int>(a0) + x + 1, static_cast<int>(b0) + y + 1});
        }
        if (x == prevX) {
            --y;
            reversed.push_back({DiffLine::Op::Added, b[b0 + static_cast<size_t>(y)], 0,
                                static_cast<int>(b0) + y + 1});
        } else {
            --x;
            reversed.push_back({DiffLine::Op::Removed, a[a0 + static_cast<size_t>(x)],
                                static_cast<int>(a0) + x + 1, 0});
        }
    }
    while (x > 0 && y > 0) {
        --x;
        --y;
        reversed.push_back({DiffLine::Op::Same, a[a0 + static_cast<size_t>(x)],
                            static_cast<int>(a0) + x + 1, static_cast<int>(b0) + y + 1});
    }
    out.insert(out.end(), reversed.rbegin(), reversed.rend());
    return true;
}

} // namespace

std::vector<DiffLine> diffLines(const std::vector<std::string>& a,
                                const std::vector<std::string>& b, int maxEdits) {
    std::vector<DiffLine> out;
    size_t prefix = 0;
    while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) {
        out.push_back({DiffLine::Op::Same, a[prefix], static_cast<int>(prefix) + 1,
                       static_cast<int>(prefix) + 1});
        ++prefix;
    }
    size_t suffix = 0;
    while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
           a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
        ++suffix;
    }
    const size_t a1 = a.size() - suffix;
    const size_t b1 = b.size() - suffix;
    if (!myers(a, prefix, a1, b, prefix, b1, maxEdits, out)) {
        for (size_t i = prefix; i < a1; ++i) {
            out.push_back({DiffLine::Op::Removed, a[i], static_cast<int>(i) + 1, 0});
        }
        for (size_t i = prefix; i < b1; ++i) {
            out.push_back({DiffLine::Op::Added, b[i], 0, static_cast<int>(i) + 1});
        }
    }
    for (size_t i = 0; i < suffix; ++i) {
        out.push_back({DiffLine::Op::Same, a[a1 + i], static_cast<int>(a1 + i) + 1,
                       static_cast<int>(b1 + i) + 1});
    }
    return out;
}

std::vector<DiffLine> diffLines(const std::string& a, const std::string& b, int maxEdits) {
    return diffLines(splitLines(a), splitLines(b), maxEdits);
}

std::vector<DiffLine> withContext(const std::vector<DiffLine>& lines, int context) {
    std::vector<bool> keep(lines.size(), false);
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].op != DiffLine::Op::Same) {
            const size_t from =
                i >= static_cast<size_t>(context) ? i - static_cast<size_t>(context) : 0;
            const size_t to = std::min(lines.size(), i + static_cast<size_t>(context) + 1);
            std::fill(keep.begin() + static_cast<std::ptrdiff_t>(from),
                      keep.begin() + static_cast<std::ptrdiff_t>(to), true);
        }
    }
    std::vector<DiffLine> out;
    size_t i = 0;
    while (i < lines.size()) {
        if (keep[i]) {
            out.push_back(lines[i++]);
            continue;
        }
        size_t j = i;
        while (j < lines.size() && !keep[j]) {
            ++j;
        }
        DiffLine skipped;
        skipped.op = DiffLine::Op::Skipped;
        skipped.count = static_cast<int>(j - i);
        // Where the next shown line sits in each text (for a hunk header).
        if (j < lines.size()) {
            skipped.lineA = lines[j].lineA;
            skipped.lineB = lines[j].lineB;
        }
        out.push_back(skipped);
        i = j;
    }
    return out;
}

std::string unifiedText(const std::vector<DiffLine>& lines) {
    std::string text;
    for (const auto& line : lines) {
        switch (line.op) {
        case DiffLine::Op::Same:
            text += " " + line.text + "\n";
            break;
        case DiffLine::Op::Added:
            text += "+" + line.text + "\n";
            break;
        case DiffLine::Op::Removed:
            text += "-" + line.text + "\n";
            break;
        case DiffLine::Op::Skipped:
            text += "@@ " + std::to_string(line.count) + " unchanged line" +
                    (line.count == 1 ? "" : "s") + " @@\n";
            break;
        }
    }
    return text;
}

} // namespace scriptscope
