// The Activations tab's table: one row per recorded value, sorted by its numbers.
#include "numerics_common.h"
#include "numerics_panel.h"

#include "capability.h"
#include "operator_libraries.h"

#include "model_workspace.h"
#include "run_panel.h"
#include "worker_client.h"

#include <format.h>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTextBlock>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "plot_style.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace scriptscope {

using namespace numerics;

// ---------------------------------------------------------------------------------------------
// The table

void ActivationTableModel::setReport(const ActivationReport& report) {
    beginResetModel();
    report_ = report;
    endResetModel();
}

int ActivationTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(report_.records.size());
}

int ActivationTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ActivationTableModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == StdColumn) {
        return tr("Standard deviation of the finite values as torch.std() computes it: unbiased, "
                  "dividing by n \u2212 1 (0 for a single value)");
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case IndexColumn:
        return tr("#");
    case NodeColumn:
        return tr("Node");
    case ModuleColumn:
        return tr("Module");
    case ShapeColumn:
        return tr("Shape");
    case DtypeColumn:
        return tr("dtype");
    case MinColumn:
        return tr("Min");
    case MaxColumn:
        return tr("Max");
    case MeanColumn:
        return tr("Mean");
    case StdColumn:
        return tr("Std");
    case NanColumn:
        return tr("NaN");
    case InfColumn:
        return tr("Inf");
    case DiffColumn:
        return tr("Max |diff|");
    default:
        return {};
    }
}

QVariant ActivationTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto row = static_cast<size_t>(index.row());
    const ActivationRecord& r = report_.records[row];
    const bool stats = r.note.empty() && r.numel > 0 && !noFiniteValue(r);
    const bool beyond = !recordAgrees(r, report_.criterion);
    if (role == RecordRole) {
        return index.row();
    }
    if (role == NonFiniteRole) {
        return r.nonFinite();
    }
    if (role == SortRole) {
        switch (index.column()) {
        case IndexColumn:
            return index.row();
        case MinColumn:
            return stats ? r.min : -HUGE_VAL;
        case MaxColumn:
            return stats ? r.max : -HUGE_VAL;
        case MeanColumn:
            return stats ? r.mean : -HUGE_VAL;
        case StdColumn:
            return stats ? r.stddev : -HUGE_VAL;
        case NanColumn:
            return static_cast<qlonglong>(r.nanCount);
        case InfColumn:
            return static_cast<qlonglong>(r.infCount);
        case DiffColumn:
            return r.compared ? r.maxAbsDiff : -1.0;
        case ShapeColumn:
            return static_cast<qlonglong>(r.numel);
        default:
            break;
        }
        return data(index, Qt::DisplayRole);
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case IndexColumn:
            return index.row();
        case NodeColumn:
            return where(r);
        case ModuleColumn:
            return r.module.empty() ? tr("(root)") : q(r.module);
        case ShapeColumn:
            return r.note.empty() ? shapeText(r.shape) : q(r.note);
        case DtypeColumn:
            return q(r.dtype);
        case MinColumn:
            return stats ? number(r.min) : QStringLiteral("\u2014");
        case MaxColumn:
            return stats ? number(r.max) : QStringLiteral("\u2014");
        case MeanColumn:
            return stats ? number(r.mean) : QStringLiteral("\u2014");
        case StdColumn:
            return stats ? number(r.stddev) : QStringLiteral("\u2014");
        case NanColumn:
            return static_cast<qlonglong>(r.nanCount);
        case InfColumn:
            return static_cast<qlonglong>(r.infCount);
        case DiffColumn:
            return r.compared              ? number(r.maxAbsDiff)
                   : r.compareNote.empty() ? QString()
                                           : tr("not compared");
        default:
            return {};
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() >= DiffColumn &&
        index.column() != DtypeColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::BackgroundRole) {
        const bool dark = QApplication::palette().color(QPalette::Base).lightness() < 128;
        if (r.nonFinite()) {
            return dark ? QColor(110, 30, 30) : QColor(255, 205, 205);
        }
        if (static_cast<int>(row) == report_.firstDifference ||
            (beyond && index.column() == DiffColumn)) {
            return dark ? QColor(110, 70, 10) : QColor(255, 226, 180);
        }
        return {};
    }
    if (role == Qt::ToolTipRole) {
        QStringList lines;
        lines << QStringLiteral("%%1 = %2").arg(q(r.value), where(r));
        if (!r.source.empty()) {
            lines << tr("source %1: %2").arg(q(r.source), q(r.sourceText));
        }
        if (!r.moduleOutputs.empty()) {
            QStringList paths;
            for (const auto& p : r.moduleOutputs) {
                paths << q(p);
            }
            lines << tr("the output of %1").arg(paths.join(QStringLiteral(", ")));
        }
        if (!r.comparedWith.empty()) {
            lines
                << (r.compared
                        ? tr("compared with %1: max |diff| %2, relative %3, cosine %4, "
                             "SNR %5 dB")
                              .arg(q(r.comparedWith), number(r.maxAbsDiff), number(r.maxRelDiff),
                                   number(r.cosine), number(r.snrDb))
                        : tr("not compared with %1: %2").arg(q(r.comparedWith), q(r.compareNote)));
        }
        return lines.join(QLatin1Char('\n'));
    }
    return {};
}

} // namespace scriptscope
