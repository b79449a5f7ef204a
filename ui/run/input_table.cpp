#include "input_table.h"

#include "warp_editor.h"

#include <input_spec.h>

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QJsonObject>
#include <QLineEdit>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace scriptscope {
namespace {

struct InputSource {
    const char* key;
    const char* label;
    const char* tip;
};

const InputSource kSources[] = {
    {"elements", QT_TRANSLATE_NOOP("InputTable", "Elements"),
     QT_TRANSLATE_NOOP("InputTable", "One row per element below, each with its own source")},
    {"image", QT_TRANSLATE_NOOP("InputTable", "Image"),
     QT_TRANSLATE_NOOP("InputTable", "The warp editor's image, or a file")},
    {"warp", QT_TRANSLATE_NOOP("InputTable", "Warp matrix"),
     QT_TRANSLATE_NOOP("InputTable", "The warp editor's current 3x3 matrix (float32)")},
    {"random", QT_TRANSLATE_NOOP("InputTable", "Random"),
     QT_TRANSLATE_NOOP("InputTable", "Standard normal (floats) or 0..9 (integers), seeded")},
    {"zeros", QT_TRANSLATE_NOOP("InputTable", "Zeros"), ""},
    {"ones", QT_TRANSLATE_NOOP("InputTable", "Ones"), ""},
    {"file", QT_TRANSLATE_NOOP("InputTable", "File (torch.save)"),
     QT_TRANSLATE_NOOP("InputTable", "A value written by Python's torch.save")},
    {"value", QT_TRANSLATE_NOOP("InputTable", "Value"),
     QT_TRANSLATE_NOOP("InputTable",
                       "A value or any input spec as the CLI takes it: 3, 0.5, true, str:text, "
                       "ints:1,2, list:SPEC;SPEC, ...")},
    {"sample", QT_TRANSLATE_NOOP("InputTable", "Sample"),
     QT_TRANSLATE_NOOP("InputTable",
                       "A .pt2: the example input the archive keeps, what torch.export was given. "
                       "A .pte: random values of the shape and dtype its execution plan gives")},
    {"none", QT_TRANSLATE_NOOP("InputTable", "None"), ""},
    {"default", QT_TRANSLATE_NOOP("InputTable", "Default"),
     QT_TRANSLATE_NOOP("InputTable", "The default the schema gives")},
};

bool nameSaysImage(const QString& name) {
    for (const char* word : {"image", "img", "photo", "picture", "pixel", "frame"}) {
        if (name.contains(QLatin1String(word))) {
            return true;
        }
    }
    return false;
}

bool nameSaysMatrix(const QString& name) {
    return name.contains(QLatin1String("warp")) || name.contains(QLatin1String("homograph")) ||
           name.contains(QLatin1String("matrix"));
}

bool isScalarList(const TypeShape& type) {
    if (type.kind != TypeShape::Kind::List || type.elements.empty()) {
        return false;
    }
    const auto k = type.elements.front().kind;
    return k == TypeShape::Kind::Int || k == TypeShape::Kind::Float || k == TypeShape::Kind::Bool ||
           k == TypeShape::Kind::String;
}

// Whether a value of `kind` fits a row of `type`; the worker checks the rest (and names it).
bool fits(const TypeShape& type, const InputSpec& spec) {
    using K = InputSpec::Kind;
    const K kind = spec.kind;
    if (kind == K::File || kind == K::Sample || type.kind == TypeShape::Kind::Other) {
        return true;
    }
    switch (type.kind) {
    case TypeShape::Kind::Tensor:
        return kind == K::Random || kind == K::Zeros || kind == K::Ones || kind == K::Image ||
               kind == K::Matrix;
    case TypeShape::Kind::Int:
        return kind == K::Int;
    case TypeShape::Kind::Float:
        return kind == K::Float || kind == K::Int;
    case TypeShape::Kind::Bool:
        return kind == K::Bool;
    case TypeShape::Kind::String:
        return kind == K::String;
    case TypeShape::Kind::List:
        return kind == K::List || kind == K::IntList || kind == K::FloatList;
    case TypeShape::Kind::Tuple:
        return kind == K::Tuple;
    case TypeShape::Kind::Dict:
        return kind == K::Dict;
    default:
        return true;
    }
}

} // namespace

InputTable::InputTable(WarpEditor* warpEditor, QWidget* parent)
    : QWidget(parent)
    , warpEditor_(warpEditor) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    table_ = new QTableWidget(0, ColumnCount, this);
    table_->setObjectName(QStringLiteral("inputsTable"));
    table_->setHorizontalHeaderLabels(
        {tr("Argument"), tr("Type"), tr("Source"), tr("Value"), QString(), QString()});
    table_->verticalHeader()->hide();
    auto* header = table_->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(ValueColumn, QHeaderView::Stretch);
    // Long types ("Dict(str, Tensor)[]?") are in the tooltip; the value column keeps its room.
    header->setSectionResizeMode(TypeColumn, QHeaderView::Interactive);
    table_->setColumnWidth(TypeColumn, 100);
    table_->setMinimumHeight(110);
    table_->setWordWrap(false);
    layout->addWidget(table_);
}

InputTable::~InputTable() = default;

int InputTable::rowOf(int argument, int element) const {
    for (size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].argument == argument && rows_[i].element == element) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int InputTable::rowOfWidget(const QWidget* widget, int column) const {
    for (int row = 0; row < table_->rowCount(); ++row) {
        if (table_->cellWidget(row, column) == widget) {
            return row;
        }
    }
    return -1;
}

int InputTable::elementCount(int argument) const {
    int count = 0;
    for (const Row& row : rows_) {
        count += row.argument == argument && row.element >= 0;
    }
    return count;
}

QString InputTable::nameOf(int tableRow) const {
    const Row& row = rows_[static_cast<size_t>(tableRow)];
    const QString argument =
        QString::fromStdString(arguments_[static_cast<size_t>(row.argument)].name);
    if (row.element < 0) {
        return tr("Argument '%1'").arg(argument);
    }
    const int argumentRow = rowOf(row.argument);
    if (rows_[static_cast<size_t>(argumentRow)].type.kind == TypeShape::Kind::Dict) {
        return tr("Argument '%1', entry '%2'")
            .arg(argument, table_->item(tableRow, ArgumentColumn)->text().trimmed());
    }
    return tr("Argument '%1', element %2").arg(argument).arg(row.element);
}

void InputTable::Row::setType(const TypeShape& shape) {
    optional = shape.kind == TypeShape::Kind::Optional && !shape.elements.empty();
    type = optional ? shape.elements.front() : shape;
}

void InputTable::setArguments(const std::vector<SchemaArgument>& arguments, bool imageModel,
                              bool sampleInputs) {
    arguments_ = arguments;
    imageModel_ = imageModel;
    sampleInputs_ = sampleInputs;
    rows_.clear();
    table_->setRowCount(0);
    for (int a = 0; a < static_cast<int>(arguments_.size()); ++a) {
        const SchemaArgument& argument = arguments_[static_cast<size_t>(a)];
        Row row;
        row.argument = a;
        row.setType(parseTypeShape(argument.type));
        row.hasDefault = argument.hasDefault;
        insertRow(table_->rowCount(), row);
        if (row.type.isContainer()) {
            const int count = row.type.kind == TypeShape::Kind::Tuple
                                  ? static_cast<int>(row.type.elements.size())
                                  : 1;
            for (int e = 0; e < count; ++e) {
                addElement(a);
            }
        }
        const QString initial = defaultSource(row);
        setInput(a, initial, defaultValue(row, initial));
    }
}

void InputTable::insertRow(int at, const Row& row) {
    table_->insertRow(at);
    rows_.insert(rows_.begin() + at, row);
    const SchemaArgument& argument = arguments_[static_cast<size_t>(row.argument)];
    const bool element = row.element >= 0;
    const bool dictEntry = element && rows_[static_cast<size_t>(rowOf(row.argument))].type.kind ==
                                          TypeShape::Kind::Dict;
    auto* name =
        new QTableWidgetItem(element ? (dictEntry ? QStringLiteral("key%1").arg(row.element)
                                                  : QStringLiteral("   [%1]").arg(row.element))
                                     : QString::fromStdString(argument.name));
    name->setFlags(dictEntry ? Qt::ItemIsEnabled | Qt::ItemIsEditable | Qt::ItemIsSelectable
                             : Qt::ItemIsEnabled);
    if (dictEntry) {
        name->setToolTip(tr("The entry's key: double-click to edit"));
    }
    QString typeText = QString::fromStdString(element ? row.type.text : argument.type);
    if (!element && argument.hasDefault) {
        typeText += QStringLiteral(" = ") + QString::fromStdString(argument.defaultValue);
    }
    auto* type = new QTableWidgetItem(typeText);
    type->setFlags(Qt::ItemIsEnabled);
    type->setToolTip(typeText);
    table_->setItem(at, ArgumentColumn, name);
    table_->setItem(at, TypeColumn, type);

    auto* source = new QComboBox(table_);
    auto* value = new QLineEdit(table_);
    auto* browse = new QToolButton(table_);
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Choose a file"));
    table_->setCellWidget(at, SourceColumn, source);
    table_->setCellWidget(at, ValueColumn, value);
    table_->setCellWidget(at, BrowseColumn, browse);
    fillSources(at);

    const TypeShape::Kind kind = row.type.kind;
    const bool growable = kind == TypeShape::Kind::List || kind == TypeShape::Kind::Dict;
    if (!element && growable) {
        auto* add = new QToolButton(table_);
        add->setText(QStringLiteral("+"));
        add->setToolTip(tr("Add an element"));
        table_->setCellWidget(at, EditColumn, add);
        connect(add, &QToolButton::clicked, this, [this, add]() {
            const int r = rowOfWidget(add, EditColumn);
            if (r >= 0) {
                const int a = rows_[static_cast<size_t>(r)].argument;
                setInput(a, QStringLiteral("elements"), {});
                const int e = addElement(a);
                // A new element starts like the one before it (the next image of a batch).
                if (e > 0) {
                    setElement(a, e, this->source(a, e - 1), QString());
                }
                Q_EMIT changed();
            }
        });
    } else if (element) {
        const TypeShape::Kind parent = rows_[static_cast<size_t>(rowOf(row.argument))].type.kind;
        if (parent == TypeShape::Kind::List || parent == TypeShape::Kind::Dict) {
            auto* remove = new QToolButton(table_);
            remove->setText(QStringLiteral("−"));
            remove->setToolTip(tr("Remove this element"));
            table_->setCellWidget(at, EditColumn, remove);
            connect(remove, &QToolButton::clicked, this, [this, remove]() {
                const int r = rowOfWidget(remove, EditColumn);
                if (r >= 0) {
                    removeElement(rows_[static_cast<size_t>(r)].argument,
                                  rows_[static_cast<size_t>(r)].element);
                    Q_EMIT changed();
                }
            });
        }
    }
    connect(source, &QComboBox::activated, this, [this, source]() {
        const int r = rowOfWidget(source, SourceColumn);
        if (r < 0) {
            return;
        }
        const QString key = source->currentData().toString();
        applySource(r, key, defaultValue(rows_[static_cast<size_t>(r)], key));
        Q_EMIT changed();
    });
    connect(value, &QLineEdit::editingFinished, this, &InputTable::changed);
    connect(browse, &QToolButton::clicked, this, [this, browse]() {
        const int r = rowOfWidget(browse, BrowseColumn);
        if (r < 0) {
            return;
        }
        const QString path = QFileDialog::getOpenFileName(this, tr("Input for %1").arg(nameOf(r)));
        if (!path.isEmpty()) {
            auto* box = qobject_cast<QComboBox*>(table_->cellWidget(r, SourceColumn));
            const QString chosen = box->currentData().toString();
            applySource(r, chosen == QLatin1String("image") ? chosen : QStringLiteral("file"),
                        path);
            Q_EMIT changed();
        }
    });
}

void InputTable::fillSources(int tableRow) {
    const Row& row = rows_[static_cast<size_t>(tableRow)];
    auto* box = qobject_cast<QComboBox*>(table_->cellWidget(tableRow, SourceColumn));
    box->clear();
    QStringList keys;
    switch (row.type.kind) {
    case TypeShape::Kind::Tensor:
        keys = {QStringLiteral("image"), QStringLiteral("warp"), QStringLiteral("random"),
                QStringLiteral("zeros"), QStringLiteral("ones"), QStringLiteral("file"),
                QStringLiteral("value")};
        break;
    case TypeShape::Kind::List:
    case TypeShape::Kind::Tuple:
    case TypeShape::Kind::Dict:
        keys = {QStringLiteral("elements"), QStringLiteral("value"), QStringLiteral("file")};
        break;
    default:
        keys = {QStringLiteral("value"), QStringLiteral("file")};
        break;
    }
    if (sampleInputs_ && row.element < 0) {
        keys.prepend(QStringLiteral("sample"));
    }
    if (row.optional) {
        keys << QStringLiteral("none");
    }
    if (row.element < 0 && row.hasDefault) {
        keys << QStringLiteral("default");
    }
    for (const QString& key : keys) {
        for (const InputSource& s : kSources) {
            if (key == QLatin1String(s.key)) {
                box->addItem(tr(s.label), key);
                if (*s.tip) {
                    box->setItemData(box->count() - 1, tr(s.tip), Qt::ToolTipRole);
                }
            }
        }
    }
}

QString InputTable::defaultSource(const Row& row) const {
    const QString name =
        QString::fromStdString(arguments_[static_cast<size_t>(row.argument)].name).toLower();
    if (row.element < 0 && sampleInputs_) {
        return QStringLiteral("sample"); // a .pt2 runs on what it was exported with
    }
    if (row.element < 0 && row.hasDefault) {
        return QStringLiteral("default");
    }
    if (row.element < 0 && row.optional) {
        return QStringLiteral("none");
    }
    switch (row.type.kind) {
    case TypeShape::Kind::Tensor:
        if (nameSaysMatrix(name)) {
            return QStringLiteral("warp");
        }
        // Only an argument that is plainly an image starts as the demo photo; others start as an
        // empty shape to type (an LSTM's x is no photo).
        if (nameSaysImage(name) || (imageModel_ && (name == QLatin1String("x") ||
                                                    name.startsWith(QLatin1String("input")) ||
                                                    name == QLatin1String("data")))) {
            return QStringLiteral("image");
        }
        return QStringLiteral("random");
    case TypeShape::Kind::List:
        return isScalarList(row.type) ? QStringLiteral("value") : QStringLiteral("elements");
    case TypeShape::Kind::Tuple:
    case TypeShape::Kind::Dict:
        return QStringLiteral("elements");
    default:
        return QStringLiteral("value");
    }
}

QString InputTable::defaultValue(const Row& row, const QString& source) const {
    if (source != QLatin1String("value")) {
        return {};
    }
    switch (row.type.kind) {
    case TypeShape::Kind::Int:
        return QStringLiteral("0");
    case TypeShape::Kind::Float:
        return QStringLiteral("0.0");
    case TypeShape::Kind::Bool:
        return QStringLiteral("false");
    case TypeShape::Kind::String:
        return QStringLiteral("str:");
    case TypeShape::Kind::List:
        if (isScalarList(row.type)) {
            return row.type.elements.front().kind == TypeShape::Kind::Float
                       ? QStringLiteral("floats:0.5,1.0")
                       : QStringLiteral("ints:1,2");
        }
        return QStringLiteral("list:");
    default:
        return {};
    }
}

int InputTable::addElement(int argument) {
    const int argumentRow = rowOf(argument);
    if (argumentRow < 0 || !rows_[static_cast<size_t>(argumentRow)].type.isContainer()) {
        return -1;
    }
    const Row& parent = rows_[static_cast<size_t>(argumentRow)];
    const int index = elementCount(argument);
    Row row;
    row.argument = argument;
    row.element = index;
    if (parent.type.kind == TypeShape::Kind::Tuple) {
        if (index >= static_cast<int>(parent.type.elements.size())) {
            return -1; // a tuple has the elements its type says
        }
        row.setType(parent.type.elements[static_cast<size_t>(index)]);
    } else if (parent.type.kind == TypeShape::Kind::Dict) {
        // A dict's value (an Optional one may be None).
        row.setType(parent.type.elements.size() == 2 ? parent.type.elements[1] : TypeShape{});
    } else {
        // A list's element (of List[Optional[Tensor]], it may be None).
        row.setType(parent.type.elements.empty() ? TypeShape{} : parent.type.elements.front());
    }
    const int at = argumentRow + index + 1;
    insertRow(at, row);
    const QString initial = defaultSource(row);
    applySource(at, initial, defaultValue(row, initial));
    table_->setRowHidden(at, source(argument) != QLatin1String("elements") &&
                                 !source(argument).isEmpty());
    return index;
}

void InputTable::removeElement(int argument, int element) {
    const int r = rowOf(argument, element);
    if (r < 0) {
        return;
    }
    table_->removeRow(r);
    rows_.erase(rows_.begin() + r);
    renumber(argument);
}

void InputTable::renumber(int argument) {
    const bool dict =
        rows_[static_cast<size_t>(rowOf(argument))].type.kind == TypeShape::Kind::Dict;
    int next = 0;
    for (size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].argument == argument && rows_[i].element >= 0) {
            rows_[i].element = next;
            if (!dict) {
                table_->item(static_cast<int>(i), ArgumentColumn)
                    ->setText(QStringLiteral("   [%1]").arg(next));
            }
            ++next;
        }
    }
}

void InputTable::setInput(int argument, const QString& source, const QString& value) {
    const int r = rowOf(argument);
    if (r >= 0) {
        applySource(r, source, value);
    }
}

void InputTable::setElement(int argument, int element, const QString& source, const QString& value,
                            const QString& key) {
    while (elementCount(argument) <= element) {
        if (addElement(argument) < 0) {
            return;
        }
    }
    const int r = rowOf(argument, element);
    if (r < 0) {
        return;
    }
    applySource(r, source, value);
    if (!key.isEmpty()) {
        table_->item(r, ArgumentColumn)->setText(key);
    }
}

void InputTable::applySource(int tableRow, const QString& source, const QString& value) {
    const Row& row = rows_[static_cast<size_t>(tableRow)];
    auto* box = qobject_cast<QComboBox*>(table_->cellWidget(tableRow, SourceColumn));
    auto* edit = qobject_cast<QLineEdit*>(table_->cellWidget(tableRow, ValueColumn));
    auto* browse = table_->cellWidget(tableRow, BrowseColumn);
    if (!box || !edit) {
        return;
    }
    box->setCurrentIndex(std::max(0, box->findData(source)));
    const QString key = box->currentData().toString();
    edit->setText(key == QLatin1String("elements") ? QString() : value);
    edit->setEnabled(key != QLatin1String("warp") && key != QLatin1String("none") &&
                     key != QLatin1String("default") && key != QLatin1String("elements") &&
                     key != QLatin1String("sample"));
    browse->setEnabled(key == QLatin1String("image") || key == QLatin1String("file"));
    const bool element = row.element >= 0;
    QString tip;
    if (key == QLatin1String("image")) {
        edit->setPlaceholderText(warpEditor_ && !warpEditor_->imagePath().isEmpty()
                                     ? QFileInfo(warpEditor_->imagePath()).fileName()
                                     : tr("an image file"));
        tip = tr("Empty: the warp editor's image. Options of this image alone may follow the "
                 "path: photo.png,size=320x320");
        if (element) {
            tip += tr("\nAn element of a list is one image without a batch dimension (CHW), as "
                      "torchvision's detection models take them; batch=1 after the path adds it.");
        }
    } else if (key == QLatin1String("warp")) {
        edit->setPlaceholderText(tr("the warp editor's current 3x3 matrix"));
    } else if (key == QLatin1String("file")) {
        edit->setPlaceholderText(tr("a file written by torch.save"));
    } else if (key == QLatin1String("value")) {
        edit->setPlaceholderText(tr("3, 0.5, true, str:text, ints:1,2, list:SPEC;SPEC"));
    } else if (key == QLatin1String("elements")) {
        edit->setPlaceholderText(tr("the rows below"));
    } else if (key == QLatin1String("sample")) {
        edit->setPlaceholderText(tr("what the archive gives for it"));
    } else if (key == QLatin1String("none") || key == QLatin1String("default")) {
        edit->setPlaceholderText(QString());
    } else {
        edit->setPlaceholderText(tr("type a shape, e.g. 2x10 or 1x3x32x32[:dtype[:seed]]"));
        tip = tr("The shape the model takes: its code decides what fits");
    }
    edit->setToolTip(tip);
    if (element) {
        return;
    }
    // A container's element rows show only while it is built from them.
    for (size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].argument == row.argument && rows_[i].element >= 0) {
            table_->setRowHidden(static_cast<int>(i), key != QLatin1String("elements"));
        }
    }
}

QString InputTable::source(int argument, int element) const {
    const int r = rowOf(argument, element);
    if (r < 0) {
        return {};
    }
    return qobject_cast<QComboBox*>(table_->cellWidget(r, SourceColumn))->currentData().toString();
}

QString InputTable::value(int argument, int element) const {
    const int r = rowOf(argument, element);
    if (r < 0) {
        return {};
    }
    return qobject_cast<QLineEdit*>(table_->cellWidget(r, ValueColumn))->text();
}

bool InputTable::usesSource(const QString& source) const {
    for (int r = 0; r < table_->rowCount(); ++r) {
        if (!table_->isRowHidden(r) &&
            qobject_cast<QComboBox*>(table_->cellWidget(r, SourceColumn))->currentData() ==
                source) {
            return true;
        }
    }
    return false;
}

bool InputTable::usesWarp() const {
    return usesSource(QStringLiteral("warp"));
}

bool InputTable::usesImage() const {
    return usesSource(QStringLiteral("image"));
}

std::optional<InputSpec> InputTable::specOf(int tableRow, const QString& imageOptions,
                                            QString* why) const {
    auto fail = [&](const QString& message) -> std::optional<InputSpec> {
        if (why) {
            *why = nameOf(tableRow) + QStringLiteral(": ") + message;
        }
        return std::nullopt;
    };
    const Row& row = rows_[static_cast<size_t>(tableRow)];
    const QString source = qobject_cast<QComboBox*>(table_->cellWidget(tableRow, SourceColumn))
                               ->currentData()
                               .toString();
    const QString text =
        qobject_cast<QLineEdit*>(table_->cellWidget(tableRow, ValueColumn))->text().trimmed();
    InputSpec spec;
    if (source == QLatin1String("warp")) {
        if (!warpEditor_) {
            return fail(tr("there is no warp editor"));
        }
        spec.kind = InputSpec::Kind::Matrix;
        const Homography& h = warpEditor_->matrix();
        spec.floatList.assign(h.begin(), h.end());
    } else if (source == QLatin1String("none")) {
        spec.kind = InputSpec::Kind::None;
    } else if (source == QLatin1String("sample")) {
        spec.kind = InputSpec::Kind::Sample;
        spec.intValue = row.argument;
    } else if (source == QLatin1String("elements")) {
        spec.kind = row.type.kind == TypeShape::Kind::Tuple  ? InputSpec::Kind::Tuple
                    : row.type.kind == TypeShape::Kind::Dict ? InputSpec::Kind::Dict
                                                             : InputSpec::Kind::List;
        for (size_t i = 0; i < rows_.size(); ++i) {
            if (rows_[i].argument != row.argument || rows_[i].element < 0) {
                continue;
            }
            auto element = specOf(static_cast<int>(i), imageOptions, why);
            if (!element) {
                return std::nullopt;
            }
            if (spec.kind == InputSpec::Kind::Dict) {
                const QString key =
                    table_->item(static_cast<int>(i), ArgumentColumn)->text().trimmed();
                if (key.isEmpty()) {
                    return fail(tr("entry %1 has no key").arg(rows_[i].element));
                }
                spec.keys.push_back(key.toStdString());
            }
            spec.elements.push_back(std::move(*element));
        }
        if (row.type.kind == TypeShape::Kind::Tuple &&
            spec.elements.size() != row.type.elements.size()) {
            return fail(tr("the tuple takes %1 elements").arg(row.type.elements.size()));
        }
    } else {
        QString specText;
        if (source == QLatin1String("image")) {
            // The element's own options (after the path) come last, so they win.
            const int comma = text.indexOf(QLatin1Char(','));
            const QString own = comma >= 0 ? text.mid(comma) : QString();
            QString path = comma >= 0 ? text.left(comma).trimmed() : text;
            if (path.isEmpty() && warpEditor_) {
                path = warpEditor_->imagePath();
            }
            if (path.isEmpty()) {
                return fail(tr("the warp editor's image has no file; open one there or give a "
                               "path"));
            }
            specText = QStringLiteral("image:") + path + imageOptions +
                       (row.element >= 0 ? QStringLiteral(",batch=0") : QString()) + own;
        } else if (source == QLatin1String("file")) {
            specText = QStringLiteral("file:") + text;
        } else if (source == QLatin1String("value")) {
            if (text.isEmpty()) {
                return fail(tr("type a value"));
            }
            specText = text;
        } else {
            if (text.isEmpty()) {
                return fail(tr("type the shape it takes, e.g. 2x10 (the model's code decides what "
                               "fits)"));
            }
            specText = source + QLatin1Char(':') + text;
        }
        auto parsed = parseInputSpec(specText.toStdString());
        if (!parsed) {
            return fail(QString::fromStdString(parsed.error().message));
        }
        spec = *parsed;
    }
    // None wherever the schema allows it: an Optional argument, element or dict value.
    const bool noneAllowed = spec.kind == InputSpec::Kind::None && row.optional;
    if (!noneAllowed && !fits(row.type, spec)) {
        return fail(tr("is %1, but the input is %2")
                        .arg(QString::fromStdString(row.type.text),
                             QString::fromStdString(spec.describe())));
    }
    return spec;
}

std::optional<std::vector<InputSpec>> InputTable::specs(const QString& imageOptions,
                                                        QString* why) const {
    std::vector<InputSpec> specs;
    int firstDefault = -1;
    for (int a = 0; a < static_cast<int>(arguments_.size()); ++a) {
        const int r = rowOf(a);
        if (source(a) == QLatin1String("default")) {
            firstDefault = firstDefault < 0 ? a : firstDefault;
            continue;
        }
        if (firstDefault >= 0) {
            if (why) {
                *why = tr("Argument '%1' is set, but '%2' before it uses its default: inputs are "
                          "positional, so set '%2' too")
                           .arg(QString::fromStdString(arguments_[static_cast<size_t>(a)].name),
                                QString::fromStdString(
                                    arguments_[static_cast<size_t>(firstDefault)].name));
            }
            return std::nullopt;
        }
        auto spec = specOf(r, imageOptions, why);
        if (!spec) {
            return std::nullopt;
        }
        specs.push_back(std::move(*spec));
    }
    return specs;
}

QJsonArray InputTable::settings() const {
    QJsonArray rows;
    for (int a = 0; a < static_cast<int>(arguments_.size()); ++a) {
        QJsonArray elements;
        for (int e = 0; e < elementCount(a); ++e) {
            const int r = rowOf(a, e);
            elements.append(QJsonObject{
                {QStringLiteral("source"), source(a, e)},
                {QStringLiteral("value"), value(a, e)},
                {QStringLiteral("key"), table_->item(r, ArgumentColumn)->text().trimmed()}});
        }
        QJsonObject row{{QStringLiteral("source"), source(a)}, {QStringLiteral("value"), value(a)}};
        if (!elements.isEmpty()) {
            row.insert(QStringLiteral("elements"), elements);
        }
        rows.append(row);
    }
    return rows;
}

bool InputTable::restore(const QJsonArray& rows) {
    if (rows.size() != static_cast<int>(arguments_.size())) {
        return false;
    }
    for (int a = 0; a < rows.size(); ++a) {
        const QJsonObject r = rows.at(a).toObject();
        const QJsonArray elements = r.value(QStringLiteral("elements")).toArray();
        if (!elements.isEmpty()) {
            while (elementCount(a) > elements.size()) {
                removeElement(a, elementCount(a) - 1);
            }
            for (int e = 0; e < elements.size(); ++e) {
                const QJsonObject element = elements.at(e).toObject();
                const bool dict =
                    rows_[static_cast<size_t>(rowOf(a))].type.kind == TypeShape::Kind::Dict;
                setElement(a, e, element.value(QStringLiteral("source")).toString(),
                           element.value(QStringLiteral("value")).toString(),
                           dict ? element.value(QStringLiteral("key")).toString() : QString());
            }
        }
        setInput(a, r.value(QStringLiteral("source")).toString(),
                 r.value(QStringLiteral("value")).toString());
    }
    return true;
}

} // namespace scriptscope
