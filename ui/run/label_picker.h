// The one label set a run's output is named with, on the Result bar: Auto (the archive's
// labels.txt, else a built-in set that fits the output), a built-in set (ImageNet-1k, COCO,
// Pascal VOC), the archive's own, a file the person chose, or none. The Result picture, its
// caption and the Top-k table all take their names from here; the choice is remembered per model.
#pragma once

#include <task_result.h>

#include <QComboBox>

namespace scriptscope {

class LabelPicker : public QComboBox {
    Q_OBJECT

public:
    explicit LabelPicker(QWidget* parent = nullptr);

    // Another model: its own labels (empty names: none) and the choice remembered for it.
    void showModel(const std::string& modelPath, const LabelSet& archiveLabels);
    // One label per line, in index order; chosen when read. False, with why, when it cannot be
    // read (the choice stays).
    bool loadFile(const QString& path, QString* why = nullptr);
    // "auto", "imagenet", "coco", "voc", "archive", "file" or "none"; false when that set is not
    // there (no archive labels, no file read).
    bool choose(const QString& key);
    QString choice() const;
    // The chosen labels, as interpretOutput takes them.
    TaskOptions taskOptions() const;
    // The names for a vector of this many scores (nullptr: none), as a classification picks them.
    const LabelSet* namesFor(size_t classes) const;

Q_SIGNALS:
    void labelsChanged();
    void problem(const QString& message);

private:
    void fill();
    void remember() const;
    void picked();

    std::string modelPath_;
    LabelSet archive_;
    LabelSet file_;
    QString filePath_;
    LabelSet none_;
    QString current_ = QStringLiteral("auto");
};

} // namespace scriptscope
