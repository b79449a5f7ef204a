// The commands of scriptscope-cli, run in the engine process (engine_main.cpp), which links
// LibTorch; and what they share.
#pragma once

#include "options.h"

#include <engine.h>
#include <model.h>
#include <stats.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace scriptscope::cli {

// Runs the parsed command here, in this process, and returns the exit status.
int execute(const Options& o);
// --version: the program, LibTorch (with CUDA or why not), OpenCV and Qt.
void printVersion();

int commandInfo(const Options& o);
int commandTree(const Options& o);
int commandCodeOrGraph(const Options& o);
int commandRun(const Options& o);
int commandActivations(const Options& o);
int commandOptimize(const Options& o);
int commandDiff(const Options& o);
int commandCompare(const Options& o);
int commandWarp(const Options& o);
int commandDevices(const Options& o);

// The first line of a message that is not blank.
std::string firstLine(const std::string& text);
// Reports an engine error on stderr (one line unless --verbose) and returns its exit status.
int fail(const Options& o, const Error& error);
nlohmann::json tensorJson(const TensorInfo& t);
nlohmann::json outputJson(const OutputValue& v);
void printOutput(const OutputValue& v, int depth);
nlohmann::json statsJson(const TimingStats& s);
// The model the command's positional argument `index` names, opened by the format registry (its
// code and graph text only with includeCode).
Expected<std::unique_ptr<Model>> openModelAt(const Options& o, size_t index, bool includeCode);
// Prints `text`, or writes it to -o FILE.
int printOrWrite(const Options& o, const std::string& text);

// commands_verdict.cpp: what compare and diff compared, and what it came to.
// A verdict's exit status: 0 the same, 1 they differ, 7 could not compare.
int exitStatus(Verdict verdict);
// A number as JSON holds it: null for NaN and the infinities.
nlohmann::json number(double value);
std::string fixedText(double value, int precision); // "0.250000", "inf"
std::string generalText(double value);              // four digits: "1.234e-05", "inf"
nlohmann::json criterionJson(const Criterion& criterion);
nlohmann::json differenceJson(double maxAbs, double maxRel, double cosine, double snr);
nlohmann::json outputComparisonJson(const OutputComparison& comparison);
nlohmann::json verdictJson(const ComparisonVerdict& verdict);
void printCriterion(const Criterion& criterion);
// "Outputs     {'out': T} against {'out': T}" and a line per tensor with its numbers.
void printOutputComparison(const OutputComparison& comparison, const Criterion& criterion);
void printVerdict(const ComparisonVerdict& verdict);

} // namespace scriptscope::cli
