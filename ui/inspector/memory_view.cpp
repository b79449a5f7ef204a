#include "memory_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace scriptscope {

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString bytesText(double bytes) {
    if (bytes >= 1024.0 * 1024.0) {
        return QStringLiteral("%1 MiB").arg(bytes / (1024.0 * 1024.0), 0, 'f', 1);
    }
    if (bytes >= 1024.0) {
        return QStringLiteral("%1 KiB").arg(bytes / 1024.0, 0, 'f', 1);
    }
    return QStringLiteral("%1 B").arg(static_cast<qint64>(bytes));
}

} // namespace

// The charts themselves, one below the other, as tall as the view and as wide as the calls need.
class MemoryChart : public QWidget {
public:
    explicit MemoryChart(QWidget* parent)
        : QWidget(parent) {
        setMouseTracking(true);
    }

    void setPlan(const MemoryPlan* plan) {
        plan_ = plan;
        buffers_.clear();
        if (plan_) {
            for (size_t b = 0; b < plan_->bufferBytes.size(); ++b) {
                if (plan_->bufferBytes[b] > 0) {
                    buffers_.push_back(static_cast<int>(b));
                }
            }
        }
        const int steps = plan_ ? static_cast<int>(plan_->steps.size()) + 2 : 0;
        setMinimumSize(kLeft + kRight + std::max(steps * kMinColumn, 200),
                       static_cast<int>(buffers_.size()) * (kMinChart + kGap) + kGap);
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.fillRect(rect(), palette().base());
        if (!plan_ || buffers_.empty()) {
            QColor faint = palette().color(QPalette::Text);
            faint.setAlpha(150);
            p.setPen(faint);
            p.drawText(rect(), Qt::AlignCenter, tr("This method plans no memory."));
            return;
        }
        for (size_t i = 0; i < buffers_.size(); ++i) {
            paintBuffer(p, buffers_[i], chartRect(i));
        }
    }

    bool event(QEvent* e) override {
        if (e->type() == QEvent::ToolTip) {
            const auto* help = static_cast<QHelpEvent*>(e);
            const QString text = tipAt(help->pos());
            if (text.isEmpty()) {
                QToolTip::hideText();
                e->ignore();
            } else {
                QToolTip::showText(help->globalPos(), text, this);
            }
            return true;
        }
        return QWidget::event(e);
    }

private:
    static constexpr int kLeft = 84, kRight = 16, kTop = 26, kBottom = 34, kGap = 14;
    static constexpr int kMinColumn = 34, kMinChart = 220;

    // Columns: the method's inputs (before the first call), each call, its outputs (after the
    // last): steps.size() + 2.
    int columns() const { return static_cast<int>(plan_->steps.size()) + 2; }

    QRect chartRect(size_t index) const {
        const int count = static_cast<int>(buffers_.size());
        const int each = std::max(kMinChart, (height() - kGap) / std::max(count, 1) - kGap);
        return QRect(kLeft, kGap + static_cast<int>(index) * (each + kGap) + kTop,
                     width() - kLeft - kRight, each - kTop - kBottom);
    }

    QRectF blockRect(const MemoryBlock& block, const QRect& area) const {
        const double total =
            static_cast<double>(plan_->bufferBytes[static_cast<size_t>(block.buffer)]);
        const double column = static_cast<double>(area.width()) / columns();
        const double x0 = area.left() + (block.first + 1) * column;
        const double x1 = area.left() + (std::max(block.last, block.first) + 2) * column;
        const double y0 = area.top() + area.height() * (static_cast<double>(block.offset) / total);
        const double y1 =
            area.top() + area.height() * (static_cast<double>(block.offset + block.bytes) / total);
        return QRectF(QPointF(x0 + 1, y0), QPointF(x1 - 1, std::max(y1, y0 + 4)));
    }

    QColor colourOf(int index) const {
        const bool dark = palette().color(QPalette::Base).lightness() < 128;
        return QColor::fromHsv((index * 47) % 360, dark ? 120 : 90, dark ? 150 : 235);
    }

    void paintBuffer(QPainter& p, int buffer, const QRect& area) const {
        const double total = static_cast<double>(plan_->bufferBytes[static_cast<size_t>(buffer)]);
        const QColor text = palette().color(QPalette::Text);
        const QColor grid = palette().color(QPalette::Mid);
        p.setPen(text);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRect(area.left(), area.top() - kTop, area.width(), kTop - 4),
                   Qt::AlignLeft | Qt::AlignBottom,
                   tr("Buffer %1: %2 planned").arg(buffer).arg(bytesText(total)));
        p.setFont(font());
        // The byte scale on the left, and a line per column between the calls.
        const double column = static_cast<double>(area.width()) / columns();
        p.setPen(grid);
        for (int c = 0; c <= columns(); ++c) {
            const int x = area.left() + static_cast<int>(c * column);
            p.drawLine(x, area.top(), x, area.bottom());
        }
        p.drawRect(area);
        p.setPen(text);
        for (int tick = 0; tick <= 4; ++tick) {
            const int y = area.top() + area.height() * tick / 4;
            p.drawText(QRect(0, y - 8, kLeft - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
                       bytesText(total * tick / 4));
        }
        // The calls' numbers under the chart: "in", 0, 1, ..., "out" (names in the tooltips).
        const int every = std::max(1, static_cast<int>(std::ceil(28.0 / std::max(column, 1.0))));
        for (int c = 0; c < columns(); ++c) {
            if (c != 0 && c != columns() - 1 && (c - 1) % every != 0) {
                continue;
            }
            const QString label = c == 0               ? tr("in")
                                  : c == columns() - 1 ? tr("out")
                                                       : QString::number(c - 1);
            p.drawText(QRectF(area.left() + c * column, area.bottom() + 2, column, 16),
                       Qt::AlignCenter, label);
        }
        QColor faint = text;
        faint.setAlpha(150);
        p.setPen(faint);
        p.drawText(QRect(area.left(), area.bottom() + 16, area.width(), 16), Qt::AlignCenter,
                   tr("calls, in the order they run"));
        for (size_t i = 0; i < plan_->blocks.size(); ++i) {
            const MemoryBlock& block = plan_->blocks[i];
            if (block.buffer != buffer) {
                continue;
            }
            const QRectF r = blockRect(block, area);
            p.setPen(palette().color(QPalette::Text));
            p.setBrush(colourOf(static_cast<int>(i)));
            p.drawRect(r);
            if (r.height() >= 14 && r.width() >= 30) {
                p.setPen(Qt::black);
                p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter,
                           q(block.value));
            }
        }
        p.setBrush(Qt::NoBrush);
    }

    QString stepText(int step) const {
        if (step < 0) {
            return tr("the method's input");
        }
        if (step >= static_cast<int>(plan_->steps.size())) {
            return tr("the method's output");
        }
        return tr("call %1 (%2)").arg(step).arg(q(plan_->steps[static_cast<size_t>(step)]));
    }

    QString tipAt(const QPoint& at) const {
        if (!plan_) {
            return {};
        }
        for (size_t b = 0; b < buffers_.size(); ++b) {
            const QRect area = chartRect(b);
            if (!area.contains(at)) {
                continue;
            }
            for (const MemoryBlock& block : plan_->blocks) {
                if (block.buffer == buffers_[b] && blockRect(block, area).contains(at)) {
                    return tr("<b>%1</b> %2<br>%3 at offset %4 of buffer %5<br>from %6<br>to %7")
                        .arg(q(block.value), q(block.type).toHtmlEscaped(),
                             bytesText(static_cast<double>(block.bytes)))
                        .arg(block.offset)
                        .arg(block.buffer)
                        .arg(stepText(block.first).toHtmlEscaped(),
                             stepText(block.last).toHtmlEscaped());
                }
            }
            const double column = static_cast<double>(area.width()) / columns();
            const int step = static_cast<int>((at.x() - area.left()) / column) - 1;
            return stepText(step).toHtmlEscaped();
        }
        return {};
    }

    const MemoryPlan* plan_ = nullptr;
    std::vector<int> buffers_;
};

MemoryView::MemoryView(QWidget* parent)
    : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    method_ = new QComboBox(this);
    method_->setObjectName(QStringLiteral("memoryMethod"));
    bar->addWidget(new QLabel(tr("Method:"), this));
    bar->addWidget(method_, 1);
    layout->addLayout(bar);
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("memorySummary"));
    summary_->setWordWrap(true);
    layout->addWidget(summary_);
    scroll_ = new QScrollArea(this);
    scroll_->setWidgetResizable(true);
    chart_ = new MemoryChart(scroll_);
    chart_->setObjectName(QStringLiteral("memoryChart"));
    scroll_->setWidget(chart_);
    layout->addWidget(scroll_, 1);
    connect(method_, &QComboBox::currentIndexChanged, this, [this]() { showMethod(); });
}

bool MemoryView::hasPlan(const ModuleInfo* module) {
    if (!module) {
        return false;
    }
    return std::any_of(module->methods.begin(), module->methods.end(),
                       [](const MethodInfo& m) { return !m.memoryPlan.empty(); });
}

void MemoryView::setModule(const ModuleInfo* module) {
    const QString previous = method_->currentText();
    methods_.clear();
    if (module) {
        for (const MethodInfo& method : module->methods) {
            if (!method.memoryPlan.empty()) {
                methods_.push_back(method);
            }
        }
    }
    {
        const QSignalBlocker block(method_);
        method_->clear();
        for (const MethodInfo& method : methods_) {
            method_->addItem(q(method.name));
        }
        const int keep = method_->findText(previous);
        method_->setCurrentIndex(keep >= 0 ? keep : 0);
    }
    showMethod();
}

void MemoryView::showMethod() {
    const int index = method_->currentIndex();
    if (index < 0 || index >= static_cast<int>(methods_.size())) {
        chart_->setPlan(nullptr);
        summary_->clear();
        return;
    }
    const MemoryPlan& plan = methods_[static_cast<size_t>(index)].memoryPlan;
    uint64_t planned = 0, tensors = 0;
    for (const int64_t bytes : plan.bufferBytes) {
        planned += static_cast<uint64_t>(std::max<int64_t>(bytes, 0));
    }
    for (const MemoryBlock& block : plan.blocks) {
        tensors += block.bytes;
    }
    const auto buffers = std::count_if(plan.bufferBytes.begin(), plan.bufferBytes.end(),
                                       [](int64_t b) { return b > 0; });
    summary_->setText(
        tr("%1 planned tensors, %2 in all, share %3 in %4 over %5 calls: the planner reuses "
           "the bytes of tensors that are never alive at once. Hover a tensor for its calls.")
            .arg(plan.blocks.size())
            .arg(bytesText(static_cast<double>(tensors)), bytesText(static_cast<double>(planned)),
                 buffers == 1 ? tr("1 buffer") : tr("%1 buffers").arg(buffers))
            .arg(plan.steps.size()));
    chart_->setPlan(&plan);
}

} // namespace scriptscope
