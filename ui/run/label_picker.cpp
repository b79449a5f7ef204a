#include "label_picker.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QSettings>

namespace scriptscope {
namespace {

QString settingsKey(const std::string& modelPath) {
    return QStringLiteral("labels/") + QString::fromStdString(modelPath);
}

} // namespace

LabelPicker::LabelPicker(QWidget* parent)
    : QComboBox(parent) {
    setObjectName(QStringLiteral("resultLabels"));
    // As wide as "ImageNet-1k": a long file name is elided in the box (whole in the list), so the
    // Result bar keeps its score slider at 1280 px.
    setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    setMinimumContentsLength(11);
    setToolTip(tr("The class names used on the Result picture and in the Top-k table. Auto: the "
                  "archive's labels.txt, else the built-in set that fits the output "
                  "(remembered per model)"));
    fill();
    connect(this, &QComboBox::activated, this, [this]() { picked(); });
}

void LabelPicker::fill() {
    const QSignalBlocker blocker(this);
    clear();
    addItem(tr("Auto"), QStringLiteral("auto"));
    if (!archive_.names.empty()) {
        addItem(tr("The archive's (%1 names)").arg(archive_.names.size()),
                QStringLiteral("archive"));
    }
    addItem(tr("ImageNet-1k"), QStringLiteral("imagenet"));
    addItem(tr("COCO"), QStringLiteral("coco"));
    addItem(tr("Pascal VOC"), QStringLiteral("voc"));
    if (!file_.names.empty()) {
        addItem(tr("%1 (%2 names)").arg(QString::fromStdString(file_.name)).arg(file_.names.size()),
                QStringLiteral("file"));
        setItemData(count() - 1, filePath_, Qt::ToolTipRole);
    }
    addItem(tr("None"), QStringLiteral("none"));
    insertSeparator(count());
    addItem(tr("Labels File…"), QStringLiteral("load"));
    setCurrentIndex(std::max(0, findData(current_)));
}

void LabelPicker::showModel(const std::string& modelPath, const LabelSet& archiveLabels) {
    modelPath_ = modelPath;
    archive_ = archiveLabels;
    file_ = LabelSet{};
    filePath_.clear();
    QString key = QSettings().value(settingsKey(modelPath), QStringLiteral("auto")).toString();
    if (key.startsWith(QLatin1String("file:"))) {
        const QString path = key.mid(5);
        auto read = readLabelsFile(path.toStdString());
        if (read) {
            file_ = std::move(read).value();
            filePath_ = path;
            key = QStringLiteral("file");
        } else {
            key = QStringLiteral("auto"); // the file went away
        }
    }
    if (key == QLatin1String("archive") && archive_.names.empty()) {
        key = QStringLiteral("auto");
    }
    current_ = key;
    fill();
}

bool LabelPicker::loadFile(const QString& path, QString* why) {
    auto read = readLabelsFile(path.toStdString());
    if (!read) {
        if (why) {
            *why = tr("Labels not read: %1").arg(QString::fromStdString(read.error().message));
        }
        return false;
    }
    file_ = std::move(read).value();
    filePath_ = QFileInfo(path).absoluteFilePath();
    current_ = QStringLiteral("file");
    fill();
    remember();
    Q_EMIT labelsChanged();
    return true;
}

bool LabelPicker::choose(const QString& key) {
    if (key == QLatin1String("load") || findData(key) < 0) {
        return false;
    }
    current_ = key;
    setCurrentIndex(findData(key));
    remember();
    Q_EMIT labelsChanged();
    return true;
}

QString LabelPicker::choice() const {
    return current_;
}

void LabelPicker::picked() {
    const QString key = currentData().toString();
    if (key != QLatin1String("load")) {
        choose(key);
        return;
    }
    // Back to the set in use until a file is read.
    setCurrentIndex(std::max(0, findData(current_)));
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Labels"), {}, tr("Text, one name per line (*.txt);;All files (*)"));
    QString why;
    if (!path.isEmpty() && !loadFile(path, &why)) {
        Q_EMIT problem(why);
    }
}

void LabelPicker::remember() const {
    if (modelPath_.empty()) {
        return;
    }
    QSettings().setValue(settingsKey(modelPath_), current_ == QLatin1String("file")
                                                      ? QStringLiteral("file:") + filePath_
                                                      : current_);
}

TaskOptions LabelPicker::taskOptions() const {
    TaskOptions options;
    options.archiveLabels = archive_.names.empty() ? nullptr : &archive_;
    if (current_ == QLatin1String("archive")) {
        options.labels = options.archiveLabels;
    } else if (current_ == QLatin1String("file")) {
        options.labels = &file_;
    } else if (current_ == QLatin1String("none")) {
        options.labels = &none_;
    } else if (current_ != QLatin1String("auto")) {
        options.labels = builtinLabels(current_.toStdString());
    }
    return options;
}

const LabelSet* LabelPicker::namesFor(size_t classes) const {
    const LabelSet* labels = scoreLabels(taskOptions(), classes);
    return labels && !labels->names.empty() ? labels : nullptr;
}

} // namespace scriptscope
