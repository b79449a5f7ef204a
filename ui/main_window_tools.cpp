// The main window's settings and helpers: the operator libraries (the banner, the dialog, the
// file dialog), the theme, the limits, Help and About.
#include "main_window.h"

#include "error_banner.h"
#include "help_window.h"
#include "operator_libraries.h"
#include "operator_libraries_dialog.h"
#include "worker_client.h"

#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>

#include <utility>

namespace scriptscope {

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

void MainWindow::chooseOperatorLibrary(const QString& near) {
    // Where the library the message named is (torchvision's _C and _C_stable side by side), else
    // where the last one came from.
    QString folder = QFileInfo(near).absolutePath();
    if (near.isEmpty()) {
        folder = QSettings().value(QStringLiteral("operatorLibraryFolder")).toString();
    }
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Load operator library"), folder,
                                     tr("Shared libraries (*.so *.so.*);;All files (*)"));
    if (!path.isEmpty()) {
        QSettings().setValue(QStringLiteral("operatorLibraryFolder"),
                             QFileInfo(path).absolutePath());
        addOperatorLibrary(path);
    }
}

void MainWindow::addOperatorLibrary(const QString& path) {
    operator_libraries::remember(path);
    justAddedLibrary_ = path;
    // The worker loads libraries before the archive: reopen what was being opened.
    if (!pendingFile_.isEmpty()) {
        openFile(pendingFile_);
    }
}

void MainWindow::buildLibraryBanner() {
    libraryBanner_ = new QFrame(this);
    libraryBanner_->setObjectName(QStringLiteral("libraryBanner"));
    auto* layout = new QHBoxLayout(libraryBanner_);
    libraryBannerText_ = new QLabel(libraryBanner_);
    libraryBannerText_->setWordWrap(true);
    libraryBannerText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    paintAsErrorBanner(libraryBanner_, libraryBannerText_);
    layout->addWidget(libraryBannerText_, 1);
    auto* forget = new QPushButton(tr("Forget It"), libraryBanner_);
    forget->setObjectName(QStringLiteral("forgetLibrary"));
    forget->setToolTip(tr("This build stops loading the library before every model"));
    connect(forget, &QPushButton::clicked, this, [this]() {
        operator_libraries::forget(libraryBanner_->property("library").toString());
        libraryBanner_->hide();
        showStatusMessage(tr("Forgot the operator library %1")
                              .arg(libraryBanner_->property("library").toString()),
                          8000);
    });
    layout->addWidget(forget);
    auto* manage = new QPushButton(tr("Operator Libraries…"), libraryBanner_);
    connect(manage, &QPushButton::clicked, this, [this]() { editOperatorLibraries(); });
    layout->addWidget(manage);
    auto* dismiss = new QPushButton(tr("Dismiss"), libraryBanner_);
    connect(dismiss, &QPushButton::clicked, libraryBanner_, &QWidget::hide);
    layout->addWidget(dismiss);
    libraryBanner_->hide();
}

void MainWindow::showLibraryProblem(const QString& library, const QString& why) {
    libraryBanner_->setProperty("library", library);
    libraryBannerText_->setText(why);
    libraryBanner_->show();
}

void MainWindow::showRefusedLibraries(const ModelInfo& info) {
    const QString added = std::exchange(justAddedLibrary_, QString());
    libraryBanner_->hide();
    for (const auto& [library, why] : info.refusedLibraries) {
        const QString path = q(library);
        QString sentence = q(why);
        if (!sentence.isEmpty()) {
            sentence[0] = sentence[0].toUpper();
        }
        if (!sentence.endsWith(QLatin1Char('.'))) {
            sentence += QLatin1Char('.');
        }
        if (path == added) {
            // Just chosen and refused: not remembered, and said as the failure it is.
            operator_libraries::forget(path);
            showLibraryProblem(path, tr("%1 It is not remembered.").arg(sentence));
        } else {
            showLibraryProblem(path, tr("%1 The model opened without it.").arg(sentence));
        }
    }
}

void MainWindow::editOperatorLibraries() {
    OperatorLibrariesDialog dialog(this);
    connect(&dialog, &OperatorLibrariesDialog::addRequested, this, [this, &dialog]() {
        dialog.accept();
        chooseOperatorLibrary();
    });
    dialog.exec();
    if (dialog.changed() && !currentFile_.isEmpty()) {
        showStatusMessage(tr("The operator libraries change from the next open (File > Reload)"),
                          8000);
    }
}

void MainWindow::applyTheme(const QString& theme) {
    static const QPalette systemPalette = QApplication::palette();
    if (theme == QStringLiteral("system")) {
        QApplication::setPalette(systemPalette);
        return;
    }
    QPalette p;
    const bool dark = theme == QStringLiteral("dark");
    const QColor window = dark ? QColor(0x2b, 0x2b, 0x2b) : QColor(0xf4, 0xf4, 0xf4);
    const QColor base = dark ? QColor(0x1e, 0x1e, 0x1e) : Qt::white;
    const QColor text = dark ? QColor(0xe0, 0xe0, 0xe0) : QColor(0x20, 0x20, 0x20);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, dark ? QColor(0x26, 0x26, 0x26) : QColor(0xf0, 0xf0, 0xf0));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText,
               dark ? QColor(0x80, 0x80, 0x80) : QColor(0x90, 0x90, 0x90));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x7d, 0xd1));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, dark ? QColor(0x4a, 0x4a, 0x4a) : Qt::white);
    p.setColor(QPalette::Midlight, dark ? QColor(0x3a, 0x3a, 0x3a) : QColor(0xe3, 0xe3, 0xe3));
    p.setColor(QPalette::Mid, dark ? QColor(0x70, 0x70, 0x70) : QColor(0xa0, 0xa0, 0xa0));
    p.setColor(QPalette::Dark, dark ? QColor(0x18, 0x18, 0x18) : QColor(0xa0, 0xa0, 0xa0));
    p.setColor(QPalette::Shadow, dark ? Qt::black : QColor(0x60, 0x60, 0x60));
    // Disabled widgets must look disabled: dimmed text on both themes.
    const QColor disabledText = dark ? QColor(0x6e, 0x6e, 0x6e) : QColor(0xa0, 0xa0, 0xa0);
    for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText,
                            QPalette::HighlightedText, QPalette::PlaceholderText}) {
        p.setColor(QPalette::Disabled, role, disabledText);
    }
    p.setColor(QPalette::Disabled, QPalette::Button,
               dark ? QColor(0x32, 0x32, 0x32) : QColor(0xec, 0xec, 0xec));
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    p.setColor(QPalette::Disabled, QPalette::Highlight,
               dark ? QColor(0x44, 0x44, 0x44) : QColor(0xc8, 0xc8, 0xc8));
    QApplication::setPalette(p);
}

void MainWindow::applyLimits() {
    // Saved limits, else the WorkerClient's defaults (3/4 of RAM; 2 minutes to load, 5 to run).
    QSettings settings;
    worker_->setMemoryLimitMb(
        settings.value(QStringLiteral("limits/memoryMb"), worker_->memoryLimitMb()).toLongLong());
    worker_->setLoadTimeout(
        settings.value(QStringLiteral("limits/loadSeconds"), worker_->loadTimeout() / 1000)
            .toInt() *
        1000);
    worker_->setRunTimeout(
        settings.value(QStringLiteral("limits/runSeconds"), worker_->runTimeout() / 1000).toInt() *
        1000);
}

void MainWindow::editLimits() {
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Limits for models"));
    auto* form = new QFormLayout(&dialog);
    auto* note =
        new QLabel(tr("Models load and run in a separate worker process. When it goes past "
                      "a limit it is ended, the window says which limit, and the next "
                      "request starts a new worker."),
                   &dialog);
    note->setWordWrap(true);
    form->addRow(note);
    auto* memory = new QSpinBox(&dialog);
    memory->setRange(256, 1 << 24);
    memory->setSuffix(tr(" MiB"));
    memory->setValue(static_cast<int>(worker_->memoryLimitMb()));
    auto* load = new QSpinBox(&dialog);
    load->setRange(5, 24 * 3600);
    load->setSuffix(tr(" s"));
    load->setValue(worker_->loadTimeout() / 1000);
    auto* run = new QSpinBox(&dialog);
    run->setRange(5, 24 * 3600);
    run->setSuffix(tr(" s"));
    run->setValue(worker_->runTimeout() / 1000);
    form->addRow(tr("Memory (address space)"), memory);
    form->addRow(tr("Time to load"), load);
    form->addRow(tr("Time to run (all iterations)"), run);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("limits/memoryMb"), memory->value());
    settings.setValue(QStringLiteral("limits/loadSeconds"), load->value());
    settings.setValue(QStringLiteral("limits/runSeconds"), run->value());
    applyLimits();
    showStatusMessage(tr("New limits apply from the next worker (after a Cancel, a crash or "
                         "File > Reload)"),
                      10000);
}

QString MainWindow::aboutText() const {
    QStringList libraries = workerBuild_;
    if (libraries.isEmpty()) {
        libraries << tr("LibTorch: not known yet (the worker has not started)");
    }
    libraries << tr("Qt %1 (built with %2)")
                     .arg(QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR));
    QString list;
    for (const QString& line : libraries) {
        list += QStringLiteral("<li>") + line.toHtmlEscaped() + QStringLiteral("</li>");
    }
    return tr("<h3>ScriptScope %1</h3><p>A debugger for exported PyTorch models: TorchScript "
              "archives, torch.export programs (.pt2) and ExecuTorch programs (.pte), read and "
              "drawn "
              "without running them.</p>"
              "<p>Built with:</p><ul>%2</ul>"
              "<p>Archives are code: ScriptScope loads and runs them in a separate worker "
              "process, but like PyTorch itself it cannot make an untrusted archive safe.</p>")
        .arg(QApplication::applicationVersion(), list);
}

QString MainWindow::libraryBannerText() const {
    return libraryBanner_->isVisibleTo(this) ? libraryBannerText_->text() : QString();
}

void MainWindow::showHelp(const QString& page) {
    if (!help_) {
        help_ = new HelpWindow(menuBar(), this);
    }
    help_->showPage(page);
    help_->show();
    help_->raise();
    help_->activateWindow();
}

void MainWindow::showAbout() {
    QMessageBox box(QMessageBox::NoIcon, tr("About ScriptScope"), aboutText(), QMessageBox::Ok,
                    this);
    box.setTextInteractionFlags(Qt::TextSelectableByMouse); // to paste into a bug report
    box.exec();
}

} // namespace scriptscope
