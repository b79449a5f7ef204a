#include "warp_state.h"

#include <QJsonArray>

#include <exception>

#include <cmath>

namespace scriptscope {
namespace {

template <typename Enum, size_t N>
Enum enumFromName(const std::array<std::pair<const char*, Enum>, N>& table, const QString& name,
                  Enum fallback) {
    for (const auto& [key, value] : table) {
        if (name == QLatin1String(key)) {
            return value;
        }
    }
    return fallback;
}

template <typename Enum, size_t N>
QString enumName(const std::array<std::pair<const char*, Enum>, N>& table, Enum value) {
    for (const auto& [key, entry] : table) {
        if (entry == value) {
            return QLatin1String(key);
        }
    }
    return {};
}

constexpr std::array<std::pair<const char*, WarpMode>, 2> kModes{{
    {"move-corners", WarpMode::MoveCorners},
    {"place-source", WarpMode::PlaceSource},
}};
constexpr std::array<std::pair<const char*, OutputSize>, 3> kSizes{{
    {"source", OutputSize::Source},
    {"fit", OutputSize::Fit},
    {"custom", OutputSize::Custom},
}};
QString number(double v) {
    // Round-trips a double exactly: the literal must give back the matrix that is shown.
    return QString::number(v, 'g', 17);
}

} // namespace

bool WarpState::operator==(const WarpState& o) const {
    return matrix == o.matrix && mode == o.mode && interpolation == o.interpolation &&
           border == o.border && borderValue == o.borderValue && outputSize == o.outputSize &&
           outputWidth == o.outputWidth && outputHeight == o.outputHeight;
}

QJsonObject WarpState::toJson() const {
    QJsonArray values;
    for (const double v : matrix) {
        values.append(v);
    }
    return {
        {QStringLiteral("matrix"), values},
        {QStringLiteral("mode"), enumName(kModes, mode)},
        {QStringLiteral("interpolation"), QLatin1String(my_ops::toString(interpolation))},
        {QStringLiteral("border"), QLatin1String(my_ops::toString(border))},
        {QStringLiteral("borderValue"), borderValue},
        {QStringLiteral("outputSize"), enumName(kSizes, outputSize)},
        {QStringLiteral("outputWidth"), outputWidth},
        {QStringLiteral("outputHeight"), outputHeight},
    };
}

WarpState WarpState::fromJson(const QJsonObject& json) {
    WarpState s;
    const QJsonArray values = json.value(QStringLiteral("matrix")).toArray();
    if (values.size() == 9) {
        Homography h{};
        bool finite = true;
        for (int i = 0; i < 9; ++i) {
            h[static_cast<size_t>(i)] = values.at(i).toDouble(qQNaN());
            finite = finite && std::isfinite(h[static_cast<size_t>(i)]);
        }
        if (finite) {
            s.matrix = h;
        }
    }
    s.mode = enumFromName(kModes, json.value(QStringLiteral("mode")).toString(), s.mode);
    // The operator's own names; an unknown one (a session from another version) keeps the default.
    try {
        s.interpolation = my_ops::parseInterpolation(
            json.value(QStringLiteral("interpolation")).toString().toStdString());
    } catch (const std::exception&) {
    }
    try {
        s.border =
            my_ops::parseBorderMode(json.value(QStringLiteral("border")).toString().toStdString());
    } catch (const std::exception&) {
    }
    s.borderValue = std::clamp(json.value(QStringLiteral("borderValue")).toDouble(0), 0.0, 255.0);
    s.outputSize =
        enumFromName(kSizes, json.value(QStringLiteral("outputSize")).toString(), s.outputSize);
    s.outputWidth = std::clamp(json.value(QStringLiteral("outputWidth")).toInt(640), 2, 1 << 15);
    s.outputHeight = std::clamp(json.value(QStringLiteral("outputHeight")).toInt(480), 2, 1 << 15);
    return s;
}

Homography OutputFrame::renderMatrix(const Homography& h) const {
    return multiply({1, 0, -left, 0, 1, -top, 0, 0, 1}, h);
}

OutputFrame outputFrame(const WarpState& state, int sourceWidth, int sourceHeight) {
    OutputFrame frame;
    if (homographyProblem(state.matrix, sourceWidth, sourceHeight)) {
        return frame;
    }
    switch (state.outputSize) {
    case OutputSize::Source:
        frame.width = sourceWidth;
        frame.height = sourceHeight;
        break;
    case OutputSize::Custom:
        frame.width = state.outputWidth;
        frame.height = state.outputHeight;
        break;
    case OutputSize::Fit:
        if (state.mode == WarpMode::PlaceSource) {
            frame.width = state.outputWidth;
            frame.height = state.outputHeight;
        } else if (const auto fitted = fitOutput(state.matrix, sourceWidth, sourceHeight)) {
            frame.left = fitted->left;
            frame.top = fitted->top;
            frame.width = fitted->width;
            frame.height = fitted->height;
        }
        break;
    }
    return frame;
}

std::optional<Quad> frameOnSource(const WarpState& state, int sourceWidth, int sourceHeight) {
    const OutputFrame frame = outputFrame(state, sourceWidth, sourceHeight);
    const auto inverse = inverted(state.matrix);
    if (frame.isEmpty() || !inverse) {
        return std::nullopt;
    }
    Quad quad = imageCorners(frame.width, frame.height);
    for (Point& p : quad) {
        const auto mapped = mapPoint(*inverse, Point{p.x + frame.left, p.y + frame.top});
        if (!mapped) {
            return std::nullopt;
        }
        p = *mapped;
    }
    return quad;
}

std::optional<Quad> handleQuad(const WarpState& state, int sourceWidth, int sourceHeight) {
    if (state.mode == WarpMode::MoveCorners) {
        return mappedCorners(state.matrix, sourceWidth, sourceHeight);
    }
    return frameOnSource(state, sourceWidth, sourceHeight);
}

Expected<WarpState> withHandles(const WarpState& state, const Quad& quad, int sourceWidth,
                                int sourceHeight) {
    WarpState next = state;
    if (state.mode == WarpMode::MoveCorners) {
        auto h = homographyBetween(imageCorners(sourceWidth, sourceHeight), quad);
        if (!h) {
            return h.error();
        }
        next.matrix = *h;
    } else {
        if (auto problem = quadProblem(quad)) {
            return Error{ErrorKind::Input, *problem};
        }
        int width = sourceWidth, height = sourceHeight;
        if (state.outputSize == OutputSize::Custom) {
            width = state.outputWidth;
            height = state.outputHeight;
        } else if (state.outputSize == OutputSize::Fit) {
            const auto size = rectifiedSize(quad);
            width = std::min(size[0], 1 << 15);
            height = std::min(size[1], 1 << 15);
            next.outputWidth = width;
            next.outputHeight = height;
        }
        auto h = homographyBetween(quad, imageCorners(width, height));
        if (!h) {
            return h.error();
        }
        next.matrix = *h;
    }
    if (auto problem = homographyProblem(next.matrix, sourceWidth, sourceHeight)) {
        return Error{ErrorKind::Input, *problem};
    }
    return next;
}

QString matrixAsNumpy(const Homography& h) {
    QString text = QStringLiteral("np.array([");
    for (size_t r = 0; r < 3; ++r) {
        text += QStringLiteral("[%1, %2, %3]")
                    .arg(number(h[r * 3]), number(h[r * 3 + 1]), number(h[r * 3 + 2]));
        text += r < 2 ? QStringLiteral(",\n          ") : QString();
    }
    return text + QStringLiteral("], dtype=np.float64)");
}

QString matrixAsCpp(const Homography& h) {
    QString text = QStringLiteral("const cv::Matx33d H(");
    for (size_t i = 0; i < 9; ++i) {
        text += number(h[i]);
        text +=
            i == 8 ? QStringLiteral(");")
                   : (i % 3 == 2 ? QStringLiteral(",\n                   ") : QStringLiteral(", "));
    }
    return text;
}

} // namespace scriptscope
