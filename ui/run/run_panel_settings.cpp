// The Run workspace's settings per model: what a model starts with (its saved settings, else a
// first single iteration), what is saved, and the devices offered.
#include "run_panel.h"

#include "capability.h"
#include "input_table.h"

#include <QCheckBox>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>

#include <QFileInfo>

namespace scriptscope {
namespace {

// A model's run settings start from these when it has none saved: nothing set for the previous
// model carries over (the device does: it is the machine's, not the model's). Its first run is one
// iteration without warm-up (a large model on a busy machine once took 33 s for the usual 22), and
// "Run More" then times it as usual (RunPanel::kUsualWarmup, kUsualIterations).
constexpr int kFirstWarmup = 0;
constexpr int kFirstIterations = 1;

QString settingsKey(const QString& modelPath) {
    return QStringLiteral("run/models/") +
           QString::fromLatin1(modelPath.toUtf8().toBase64(QByteArray::Base64UrlEncoding));
}

} // namespace

void RunPanel::showDevices(const std::vector<DeviceInfo>& devices) {
    devices_ = devices;
    const QString current = device_->currentData().toString();
    device_->clear();
    QStringList unavailable;
    for (const DeviceInfo& d : devices) {
        QString label = QString::fromStdString(d.id == "cpu" ? std::string("CPU") : d.id);
        if (!d.name.empty() && d.id != "cpu") {
            label += QStringLiteral(" · ") + QString::fromStdString(d.name);
        }
        if (d.memoryBytes > 0) {
            label += QStringLiteral(" · %1 GiB")
                         .arg(static_cast<double>(d.memoryBytes) / (1u << 30), 0, 'f', 1);
        }
        device_->addItem(label, QString::fromStdString(d.id));
        if (!d.available) {
            // Shown, but not selectable, with the reason.
            const int row = device_->count() - 1;
            device_->setItemData(row, QString::fromStdString(d.reason), Qt::ToolTipRole);
            if (auto* model = qobject_cast<QStandardItemModel*>(device_->model())) {
                model->item(row)->setEnabled(false);
            }
            unavailable << QString::fromStdString(d.reason);
        }
    }
    const int restore = device_->findData(current);
    device_->setCurrentIndex(restore >= 0 ? restore : 0);
    deviceNote_->setText(unavailable.isEmpty()
                             ? QString()
                             : tr("CUDA: %1").arg(unavailable.join(QStringLiteral("; "))));
}

QString RunPanel::deviceNote() const {
    return deviceNote_->text();
}

void RunPanel::setModel(const ModelInfo& model) {
    // Runs recorded elsewhere are read over a model that can have them (an ExecuTorch program,
    // with or without a runtime here).
    openEtdump_->setVisible(model.lacks(Capability::RecordedProfile).empty());
    if (!model_.modules.empty() && model.path == model_.path) {
        model_ = model;
        offer(profile_, model_, Capability::Profile);
        return; // a reload keeps what the person set
    }
    saveSettings();
    model_ = model;
    clearResults();
    const QJsonObject saved =
        QJsonDocument::fromJson(
            QSettings().value(settingsKey(QString::fromStdString(model.path))).toString().toUtf8())
            .object();
    fillMethods();
    const int method = method_->findText(saved.value(QStringLiteral("method")).toString());
    if (method >= 0) {
        method_->setCurrentIndex(method);
    }
    const int device = device_->findData(saved.value(QStringLiteral("device")).toString());
    if (device >= 0) {
        device_->setCurrentIndex(device);
    }
    warmup_->setValue(saved.value(QStringLiteral("warmup")).toInt(kFirstWarmup));
    iterations_->setValue(saved.value(QStringLiteral("iterations")).toInt(kFirstIterations));
    runMore_->hide();
    profile_->setChecked(saved.value(QStringLiteral("profile")).toBool(false));
    offer(profile_, model, Capability::Profile);
    const QJsonObject image = saved.value(QStringLiteral("image")).toObject();
    imageSize_->setText(image.value(QStringLiteral("size")).toString());
    imageOrder_->setCurrentIndex(
        std::max(0, imageOrder_->findData(image.value(QStringLiteral("order")).toString())));
    imageLayout_->setCurrentIndex(
        std::max(0, imageLayout_->findData(image.value(QStringLiteral("layout")).toString())));
    imageBatch_->setChecked(image.value(QStringLiteral("batch")).toBool(true));
    imageDtype_->setCurrentIndex(
        std::max(0, imageDtype_->findData(image.value(QStringLiteral("dtype")).toString())));
    imageScale_->setText(image.value(QStringLiteral("scale")).toString(QStringLiteral("1/255")));
    imageMean_->setText(image.value(QStringLiteral("mean")).toString());
    imageStd_->setText(image.value(QStringLiteral("std")).toString());
    if (!saved.isEmpty()) {
        inputs_->restore(saved.value(QStringLiteral("inputs")).toArray());
    } else if (const QString size = exportedImageSize(); !size.isEmpty()) {
        // An exported program records its input's size: images are made that size from the start.
        imageSize_->setText(size);
    }
    presetHint_->setVisible(looksLikeImageNetClassifier(model) && imageMean_->text().isEmpty() &&
                            inputs_->usesImage());
    const QString name = QFileInfo(QString::fromStdString(model.path)).fileName();
    if (const std::string why = model.lacks(Capability::Run); !why.empty()) {
        showStatus(tr("%1 does not run here: %2").arg(name, QString::fromStdString(why)), false);
    } else {
        showStatus(tr("Ready to run %1").arg(name), false);
    }
}

void RunPanel::useUsualTiming() {
    warmup_->setValue(kUsualWarmup);
    iterations_->setValue(kUsualIterations);
    runMore_->hide();
}

bool RunPanel::looksLikeImageNetClassifier(const ModelInfo& model) {
    // Its first convolution takes 3 channels (weight [out, 3, k, k]) and its last 2-D weight
    // gives 1000 scores (the classifier's Linear [1000, features]).
    const TensorInfo* first = nullptr;
    const TensorInfo* last = nullptr;
    for (const ModuleInfo& m : model.modules) {
        for (const TensorInfo& t : m.parameters) {
            if (!first && t.shape.size() == 4) {
                first = &t;
            }
            if (t.shape.size() == 2) {
                last = &t;
            }
        }
    }
    return first && last && first->shape[1] == 3 && last->shape[0] == 1000;
}

QJsonObject RunPanel::settings() const {
    const QJsonArray rows = inputs_->settings();
    return {
        {QStringLiteral("method"), method_->currentText()},
        {QStringLiteral("device"), device_->currentData().toString()},
        {QStringLiteral("warmup"), warmup_->value()},
        {QStringLiteral("iterations"), iterations_->value()},
        {QStringLiteral("profile"), profile_->isChecked()},
        {QStringLiteral("inputs"), rows},
        {QStringLiteral("image"),
         QJsonObject{{QStringLiteral("size"), imageSize_->text()},
                     {QStringLiteral("order"), imageOrder_->currentData().toString()},
                     {QStringLiteral("layout"), imageLayout_->currentData().toString()},
                     {QStringLiteral("batch"), imageBatch_->isChecked()},
                     {QStringLiteral("dtype"), imageDtype_->currentData().toString()},
                     {QStringLiteral("scale"), imageScale_->text()},
                     {QStringLiteral("mean"), imageMean_->text()},
                     {QStringLiteral("std"), imageStd_->text()}}},
    };
}

void RunPanel::saveSettings() const {
    if (model_.modules.empty()) {
        return;
    }
    QSettings settings;
    settings.setValue(
        settingsKey(QString::fromStdString(model_.path)),
        QString::fromUtf8(QJsonDocument(this->settings()).toJson(QJsonDocument::Compact)));
}

} // namespace scriptscope
