// Line diffs (Myers' O(ND) algorithm): what the archive diff and the pass explorer show between two
// texts. Plain C++.
#pragma once

#include <string>
#include <vector>

namespace scriptscope {

struct DiffLine {
    enum class Op { Same, Added, Removed, Skipped };
    Op op = Op::Same;
    std::string text;
    int lineA = 0; // 1-based line in the first text (0: not in it)
    int lineB = 0; // 1-based line in the second text
    // Skipped: `count` unchanged lines left out between hunks.
    int count = 0;
};

std::vector<std::string> splitLines(const std::string& text);

// Every line of both texts, in order: Same, Removed (from a) and Added (to b). Beyond maxEdits
// differences, the rest is given as all of a's remaining lines removed and b's added.
std::vector<DiffLine> diffLines(const std::vector<std::string>& a,
                                const std::vector<std::string>& b, int maxEdits = 20000);
std::vector<DiffLine> diffLines(const std::string& a, const std::string& b, int maxEdits = 20000);

// Only the changes with `context` unchanged lines around them; the unchanged runs between are one
// Skipped line each.
std::vector<DiffLine> withContext(const std::vector<DiffLine>& lines, int context = 3);

// "-" / "+" / " " lines, with "@@ -A +B @@" headers at Skipped lines: a unified diff's body.
std::string unifiedText(const std::vector<DiffLine>& lines);

} // namespace scriptscope
