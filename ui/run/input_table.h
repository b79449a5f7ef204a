// The Run workspace's inputs: one row per argument of the method's schema, and for an argument of
// a container type (List[T], Tuple[...], Dict[str, T]) a row per element below it, each with its
// own source (several images for a detector's List[Tensor], each with its own preprocessing).
// The rows become the same input specs the CLI parses (input_spec.h), so the GUI and
// `scriptscope-cli run` build the same values.
#pragma once

#include <run_types.h>
#include <schema.h>

#include <QJsonArray>
#include <QWidget>

#include <optional>

class QTableWidget;

namespace scriptscope {

class WarpEditor;

class InputTable : public QWidget {
    Q_OBJECT

public:
    enum Column {
        ArgumentColumn,
        TypeColumn,
        SourceColumn,
        ValueColumn,
        BrowseColumn,
        EditColumn, // add an element (containers), remove one (elements)
        ColumnCount
    };

    explicit InputTable(WarpEditor* warpEditor, QWidget* parent = nullptr);
    ~InputTable() override;

    // New rows for a method's arguments. imageModel: the model has 2-D convolutions, so a tensor
    // argument named x or input is taken to be an image.
    // sampleInputs: the model is a .pt2 keeping its example inputs; each argument starts as its
    // sample.
    void setArguments(const std::vector<SchemaArgument>& arguments, bool imageModel,
                      bool sampleInputs = false);
    const std::vector<SchemaArgument>& arguments() const { return arguments_; }

    QTableWidget* table() const { return table_; }
    // The table row of an argument, or of one of its elements; -1 when there is none.
    int rowOf(int argument, int element = -1) const;

    // Sources: "image", "warp", "random", "zeros", "ones", "file", "value", "none", "default",
    // and "elements" for containers.
    void setInput(int argument, const QString& source, const QString& value = {});
    void setElement(int argument, int element, const QString& source, const QString& value = {},
                    const QString& key = {});
    int addElement(int argument);
    void removeElement(int argument, int element);
    int elementCount(int argument) const;
    QString source(int argument, int element = -1) const;
    QString value(int argument, int element = -1) const;
    // Whether a row takes the warp editor's matrix (Live runs follow it).
    bool usesWarp() const;
    // Whether a row takes an image (a file or a source's frame): preprocessing applies.
    bool usesImage() const;

    // The specs the rows make, with the image preprocessing options (",size=...") for image
    // sources; nullopt with the reason (the argument and element named) when they make none.
    std::optional<std::vector<InputSpec>> specs(const QString& imageOptions, QString* why) const;

    QJsonArray settings() const;
    // Restores rows saved by settings() for the same arguments; returns false when they do not fit.
    bool restore(const QJsonArray& rows);

Q_SIGNALS:
    void changed();

private:
    bool usesSource(const QString& source) const;
    struct Row {
        int argument = -1;
        int element = -1; // -1: the argument's own row
        TypeShape type;   // of the argument (Optional unwrapped) or of the element
        bool optional = false;
        bool hasDefault = false;
        // Sets `type`, an Optional[T] as T with `optional` set: such a row may be None.
        void setType(const TypeShape& shape);
    };

    void insertRow(int at, const Row& row);
    void fillSources(int tableRow);
    void applySource(int tableRow, const QString& source, const QString& value);
    void renumber(int argument);
    int rowOfWidget(const QWidget* widget, int column) const;
    QString defaultSource(const Row& row) const;
    QString defaultValue(const Row& row, const QString& source) const;
    std::optional<InputSpec> specOf(int tableRow, const QString& imageOptions, QString* why) const;
    QString nameOf(int tableRow) const;

    WarpEditor* warpEditor_;
    QTableWidget* table_ = nullptr;
    std::vector<SchemaArgument> arguments_;
    std::vector<Row> rows_; // one per table row
    bool imageModel_ = false;
    bool sampleInputs_ = false;
};

} // namespace scriptscope
