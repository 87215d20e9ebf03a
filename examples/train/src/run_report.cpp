#include "run_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nnplug/escaped_text.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "safe_file.h"

namespace train {
namespace {

std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\u{:04x}", c);
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string json_number(double value) {
    return std::isfinite(value) ? fmt::format("{:.9g}", value) : "null";
}

std::string xml_text(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (c == '&')
            out += "&amp;";
        else
            out += c;
    }
    return out;
}

struct Series {
    std::string name;
    std::string color;
    std::vector<double> values;
};

// A "round" tick step (1, 2 or 5 times a power of ten) giving about `ticks` intervals.
double tick_step(double range, int ticks) {
    const double raw = range / ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double factor : {1.0, 2.0, 5.0})
        if (raw <= factor * magnitude) return factor * magnitude;
    return 10.0 * magnitude;
}

// One chart: axes with round ticks, a polyline per series, the legend under the axis
// title so that it never covers a curve.
std::string panel(double left, double top, double width, double height, const std::string& title,
                  const std::vector<EpochMetrics>& history, const std::vector<Series>& series) {
    double low = INFINITY, high = -INFINITY;
    for (const auto& s : series)
        for (double v : s.values)
            if (std::isfinite(v)) {
                low = std::min(low, v);
                high = std::max(high, v);
            }
    if (!std::isfinite(low)) low = 0, high = 1;
    if (high - low < 1e-9) high = low + 1e-3, low -= 1e-3;
    const double step_y = tick_step(high - low, 5);
    low = std::floor(low / step_y) * step_y;
    high = std::ceil(high / step_y) * step_y;
    const double first = static_cast<double>(history.front().epoch);
    const double last = std::max(first + 1, static_cast<double>(history.back().epoch));
    const auto x = [&](double epoch) { return left + (epoch - first) / (last - first) * width; };
    const auto y = [&](double value) { return top + height - (value - low) / (high - low) * height; };

    std::string svg;
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="14" text-anchor="middle">{}</text>)"
                       "\n",
                       left + width / 2, top - 10, xml_text(title));
    svg += fmt::format(
        R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="none" stroke="#444"/>)"
        "\n",
        left, top, width, height);
    const int intervals = static_cast<int>(std::lround((high - low) / step_y));
    for (int i = 0; i <= intervals; ++i) {
        const double value = low + step_y * i;
        svg += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/>)"
                           R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end">{:.6g}</text>)"
                           "\n",
                           left, y(value), left + width, y(value), left - 6, y(value) + 4, value);
    }
    const auto step_x = std::max<int64_t>(1, static_cast<int64_t>(tick_step(last - first, 8)));
    for (int64_t epoch = static_cast<int64_t>(std::ceil(first / step_x)) * step_x;
         epoch <= static_cast<int64_t>(last); epoch += step_x)
        svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="middle">{}</text>)"
                           "\n",
                           x(static_cast<double>(epoch)), top + height + 16, epoch);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle">epoch</text>)"
                       "\n",
                       left + width / 2, top + height + 34);
    for (size_t s = 0; s < series.size(); ++s) {
        std::string points;
        for (size_t i = 0; i < history.size(); ++i)
            if (std::isfinite(series[s].values[i]))
                points += fmt::format("{:.1f},{:.1f} ", x(static_cast<double>(history[i].epoch)),
                                      y(series[s].values[i]));
        svg += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>)"
                           "\n",
                           series[s].color, points);
        const double legend_x =
            left + width / 2 - 40 * static_cast<double>(series.size()) + 80 * static_cast<double>(s);
        const double legend_y = top + height + 54;
        svg += fmt::format(
            R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2"/>)"
            R"(<text x="{:.1f}" y="{:.1f}" font-size="11">{}</text>)"
            "\n",
            legend_x, legend_y, legend_x + 20, legend_y, series[s].color, legend_x + 25, legend_y + 4,
            xml_text(series[s].name));
    }
    return svg;
}

// An SVG document's start: its size, a white background and the run's title on top.
std::string svg_start(double width, double height, const std::string& title) {
    return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" )"
                       R"(viewBox="0 0 {0} {1}" font-family="sans-serif">)"
                       "\n"
                       R"(<rect width="100%" height="100%" fill="white"/>)"
                       "\n"
                       R"(<text x="{2}" y="22" font-size="13" text-anchor="middle">{3}</text>)"
                       "\n",
                       width, height, width / 2, xml_text(title));
}

}  // namespace

std::string metrics_csv(const std::vector<EpochMetrics>& history) {
    std::string csv = "epoch,train_loss,train_accuracy,test_loss,test_accuracy,test_roc_auc\n";
    for (const auto& m : history)
        csv += fmt::format("{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", m.epoch, m.train_loss, m.train_accuracy,
                           m.test_loss, m.test_accuracy, m.test_roc_auc);
    return csv;
}

std::string metrics_csv(const std::vector<EpochMetrics>& history, Task task) {
    if (task == Task::kBinary) return metrics_csv(history);
    const bool regression = task == Task::kRegression;
    std::string csv = regression ? "epoch,train_loss,test_loss,test_rmse,test_mae\n"
                                 : "epoch,train_loss,train_accuracy,test_loss,test_accuracy\n";
    for (const auto& m : history)
        csv += regression ? fmt::format("{},{:.9g},{:.9g},{:.9g},{:.9g}\n", m.epoch, m.train_loss,
                                        m.test_loss, m.test_rmse(), m.test_mae())
                          : fmt::format("{},{:.9g},{:.9g},{:.9g},{:.9g}\n", m.epoch, m.train_loss,
                                        m.train_accuracy, m.test_loss, m.test_accuracy);
    return csv;
}

std::string training_curves_svg(const std::vector<EpochMetrics>& history, const std::string& title, Task task,
                                const std::string& loss) {
    if (task == Task::kBinary) return training_curves_svg(history, title);
    std::string svg = svg_start(900, 400, title);
    if (!history.empty()) {
        std::vector<double> train_loss, test_loss, second_a, second_b;
        const bool regression = task == Task::kRegression;
        for (const auto& m : history) {
            train_loss.push_back(m.train_loss);
            test_loss.push_back(m.test_loss);
            second_a.push_back(regression ? m.test_rmse() : m.train_accuracy);
            second_b.push_back(regression ? m.test_mae() : m.test_accuracy);
        }
        svg += panel(70, 70, 340, 240,
                     fmt::format("loss ({}{})", loss, regression ? ", standardized target" : ""), history,
                     {{"train", "#1f77b4", train_loss}, {"test", "#d62728", test_loss}});
        if (regression)
            svg += panel(530, 70, 340, 240, "test error (target units)", history,
                         {{"RMSE", "#2ca02c", second_a}, {"MAE", "#9467bd", second_b}});
        else
            svg += panel(530, 70, 340, 240, "accuracy", history,
                         {{"train", "#1f77b4", second_a}, {"test", "#d62728", second_b}});
    }
    return svg + "</svg>\n";
}

std::string training_curves_svg(const std::vector<EpochMetrics>& history, const std::string& title) {
    constexpr double kWidth = 900, kHeight = 400;
    std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" )"
                                  R"(viewBox="0 0 {} {}" font-family="sans-serif">)"
                                  "\n"
                                  R"(<rect width="100%" height="100%" fill="white"/>)"
                                  "\n"
                                  R"(<text x="{}" y="22" font-size="13" text-anchor="middle">{}</text>)"
                                  "\n",
                                  kWidth, kHeight, kWidth, kHeight, kWidth / 2, xml_text(title));
    if (!history.empty()) {
        std::vector<double> train_loss, test_loss, train_accuracy, test_accuracy;
        for (const auto& m : history) {
            train_loss.push_back(m.train_loss);
            test_loss.push_back(m.test_loss);
            train_accuracy.push_back(m.train_accuracy);
            test_accuracy.push_back(m.test_accuracy);
        }
        svg += panel(70, 70, 340, 240, "loss (weighted BCE)", history,
                     {{"train", "#1f77b4", train_loss}, {"test", "#d62728", test_loss}});
        svg += panel(530, 70, 340, 240, "accuracy", history,
                     {{"train", "#1f77b4", train_accuracy}, {"test", "#d62728", test_accuracy}});
    }
    return svg + "</svg>\n";
}

std::string run_title(const std::string& model, const std::string& data, const std::string& loss,
                      const std::string& dtype, const std::string& backend) {
    return fmt::format("{} on {}: {} loss, {}, backend {}", model, data, loss, dtype, backend);
}

std::vector<std::pair<double, double>> roc_points(const float* scores, const float* labels, int64_t count) {
    std::vector<int64_t> order(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
    int64_t positives = 0;
    for (int64_t i = 0; i < count; ++i) positives += labels[i] == 1.0f;
    const int64_t negatives = count - positives;
    std::vector<std::pair<double, double>> points = {{0.0, 0.0}};
    int64_t true_positives = 0, false_positives = 0;
    for (size_t k = 0; k < order.size(); ++k) {
        (labels[order[k]] == 1.0f ? true_positives : false_positives) += 1;
        // One point per distinct score: tied rows move the curve together.
        if (k + 1 < order.size() && scores[order[k + 1]] == scores[order[k]]) continue;
        points.emplace_back(
            negatives > 0 ? static_cast<double>(false_positives) / static_cast<double>(negatives) : 0,
            positives > 0 ? static_cast<double>(true_positives) / static_cast<double>(positives) : 0);
    }
    return points;
}

std::string roc_curve_svg(const float* scores, const float* labels, int64_t count, double auc,
                          const std::string& title) {
    // Wide enough for the run's title above the square plot.
    constexpr double kSize = 820, kLeft = 230, kTop = 60, kSide = 360;
    const auto x = [&](double rate) { return kLeft + rate * kSide; };
    const auto y = [&](double rate) { return kTop + (1 - rate) * kSide; };
    std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" )"
                                  R"(viewBox="0 0 {0} {1}" font-family="sans-serif">)"
                                  "\n"
                                  R"(<rect width="100%" height="100%" fill="white"/>)"
                                  "\n"
                                  R"(<text x="{2}" y="22" font-size="12" text-anchor="middle">{3}</text>)"
                                  "\n"
                                  R"(<text x="{2}" y="42" font-size="13" text-anchor="middle">)"
                                  R"(ROC curve of the test split, AUC {4:.4f}</text>)"
                                  "\n",
                                  kSize, kTop + kSide + 60, kSize / 2, xml_text(title), auc);
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>)"
                       "\n"
                       R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999" stroke-dasharray="4 4"/>)"
                       "\n",
                       kLeft, kTop, kSide, kSide, x(0), y(0), x(1), y(1));
    for (int tick = 0; tick <= 5; ++tick) {
        const double rate = tick / 5.0;
        svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="middle">{:.1f}</text>)"
                           "\n"
                           R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end">{:.1f}</text>)"
                           "\n",
                           x(rate), y(0) + 16, rate, x(0) - 6, y(rate) + 4, rate);
    }
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle">)"
                       R"(false positive rate</text>)"
                       "\n"
                       R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" )"
                       R"svg(transform="rotate(-90 {:.1f} {:.1f})">true positive rate</text>)svg"
                       "\n",
                       x(0.5), y(0) + 36, kLeft - 40, y(0.5), kLeft - 40, y(0.5));
    std::string line;
    for (const auto& [fpr, tpr] : roc_points(scores, labels, count))
        line += fmt::format("{:.2f},{:.2f} ", x(fpr), y(tpr));
    svg += fmt::format(R"(<polyline fill="none" stroke="#d62728" stroke-width="2" points="{}"/>)"
                       "\n",
                       line);
    return svg + "</svg>\n";
}

std::string confusion_matrix_svg(const ClassConfusion& confusion, const std::vector<std::string>& names,
                                 const std::string& title) {
    constexpr double kCell = 44, kLeft = 150, kTop = 90;
    const auto classes = static_cast<double>(confusion.classes);
    const double side = kCell * classes;
    std::string svg = svg_start(std::max(820.0, kLeft + side + 60), kTop + side + 70, title);
    svg += fmt::format(
        R"(<text x="{:.1f}" y="50" font-size="13" text-anchor="middle">)"
        R"(Confusion matrix of the test split: {} of {} correct</text>)"
        "\n"
        R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle">predicted</text>)"
        "\n"
        R"svg(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" transform="rotate(-90 {:.1f} {:.1f})">actual</text>)svg"
        "\n",
        kLeft + side / 2, confusion.correct(), confusion.total(), kLeft + side / 2, kTop - 22, kLeft - 60,
        kTop + side / 2, kLeft - 60, kTop + side / 2);
    for (int64_t actual = 0; actual < confusion.classes; ++actual) {
        int64_t row_total = 0;
        for (int64_t predicted = 0; predicted < confusion.classes; ++predicted)
            row_total += confusion.at(actual, predicted);
        const double y = kTop + kCell * static_cast<double>(actual);
        const std::string name = xml_text(names[static_cast<size_t>(actual)]);
        svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end">{}</text>)"
                           R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="middle">{}</text>)"
                           "\n",
                           kLeft - 6, y + kCell / 2 + 4, name,
                           kLeft + kCell * (static_cast<double>(actual) + 0.5), kTop - 6, name);
        for (int64_t predicted = 0; predicted < confusion.classes; ++predicted) {
            const int64_t count = confusion.at(actual, predicted);
            // The share of the actual class's rows: white for none, dark blue for all.
            const double share = row_total ? static_cast<double>(count) / static_cast<double>(row_total) : 0;
            const auto channel = [&](double full) {
                return static_cast<int>(std::lround(255 - share * (255 - full)));
            };
            const double x = kLeft + kCell * static_cast<double>(predicted);
            svg += fmt::format(
                R"svg(<rect x="{:.1f}" y="{:.1f}" width="{}" height="{}" fill="rgb({},{},{})" stroke="#ccc"/>)svg"
                R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" fill="{}">{}</text>)"
                "\n",
                x, y, kCell, kCell, channel(8), channel(48), channel(107), x + kCell / 2, y + kCell / 2 + 4,
                share > 0.5 ? "white" : "black", count);
        }
    }
    return svg + "</svg>\n";
}

std::string predicted_vs_true_svg(const float* predicted, const float* actual, int64_t count,
                                  const RegressionErrors& errors, const std::string& title) {
    constexpr double kLeft = 230, kTop = 60, kSide = 360;
    double low = INFINITY, high = -INFINITY;
    for (int64_t i = 0; i < count; ++i)
        for (const float v : {predicted[i], actual[i]})
            if (std::isfinite(v)) low = std::min<double>(low, v), high = std::max<double>(high, v);
    if (!std::isfinite(low)) low = 0, high = 1;
    if (high - low < 1e-9) high = low + 1;
    const double step = tick_step(high - low, 5);
    low = std::floor(low / step) * step;
    high = std::ceil(high / step) * step;
    const auto x = [&](double v) { return kLeft + (v - low) / (high - low) * kSide; };
    const auto y = [&](double v) { return kTop + (1 - (v - low) / (high - low)) * kSide; };
    std::string svg = svg_start(820, kTop + kSide + 60, title);
    svg += fmt::format(
        R"(<text x="410" y="42" font-size="13" text-anchor="middle">)"
        R"(Test split: predicted against true, RMSE {:.4g}, MAE {:.4g}</text>)"
        "\n"
        R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>)"
        "\n"
        R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#999" stroke-dasharray="4 4"/>)"
        "\n",
        errors.rmse, errors.mae, kLeft, kTop, kSide, kSide, x(low), y(low), x(high), y(high));
    const int intervals = static_cast<int>(std::lround((high - low) / step));
    for (int i = 0; i <= intervals; ++i) {
        const double v = low + step * i;
        svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="middle">{:.6g}</text>)"
                           R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end">{:.6g}</text>)"
                           "\n",
                           x(v), y(low) + 16, v, x(low) - 6, y(v) + 4, v);
    }
    svg += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle">true</text>)"
        R"svg(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" transform="rotate(-90 {:.1f} {:.1f})">predicted</text>)svg"
        "\n",
        x((low + high) / 2), y(low) + 36, kLeft - 50, y((low + high) / 2), kLeft - 50, y((low + high) / 2));
    for (int64_t i = 0; i < count; ++i)
        if (std::isfinite(predicted[i]) && std::isfinite(actual[i]))
            svg += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="#1f77b4" fill-opacity="0.6"/>)"
                               "\n",
                               x(actual[i]), y(predicted[i]));
    return svg + "</svg>\n";
}

namespace {

// The multi-class summary: accuracy, loss and the C x C matrix, columns as wide as the
// widest class name.
std::string class_summary_text(const RunSummary& s) {
    const ClassConfusion& c = s.classes;
    std::string text = fmt::format("Test accuracy: {:.2f}% ({} of {}), test loss {:.4f}\n",
                                   100.0 * c.accuracy(), c.correct(), c.total(), s.last.test_loss);
    std::vector<std::string> names;
    size_t width = 5;
    for (const auto& name : s.class_names) {
        names.push_back(nnplug::escaped(name));
        width = std::max(width, names.back().size() + 2);
    }
    text += "Confusion matrix (rows: actual, columns: predicted)\n  " + std::string(width, ' ');
    for (const auto& name : names) text += fmt::format("{:>{}}", name, width);
    text += "\n";
    for (int64_t actual = 0; actual < c.classes; ++actual) {
        text += fmt::format("  {:<{}}", names[static_cast<size_t>(actual)], width);
        for (int64_t predicted = 0; predicted < c.classes; ++predicted)
            text += fmt::format("{:>{}}", c.at(actual, predicted), width);
        text += "\n";
    }
    return text;
}

// The lines every task's summary ends with: throughput and the combine's share.
std::string throughput_text(const RunSummary& s) {
    std::string text;
    if (s.samples_trained > 0)
        text += fmt::format("Training throughput: {:.0f} samples/s ({} samples in {:.3f} s) on {}\n",
                            s.samples_per_second, s.samples_trained, s.train_seconds, s.backend);
    if (s.processes > 1 && s.steps > 0)
        text += fmt::format(
            "Data-parallel over {} processes: combine {:.3f} s of the training time ({:.1f} us per step)\n",
            s.processes, s.combine_seconds, 1e6 * s.combine_seconds / static_cast<double>(s.steps));
    return text;
}

// The task's results in summary.json: the multi-class confusion matrix, or a regression's errors.
std::string task_json(const RunSummary& s) {
    if (s.task == Task::kRegression)
        return fmt::format("  \"test_rmse\": {},\n  \"test_mae\": {},\n  \"test_rows\": {},\n",
                           json_number(s.errors.rmse), json_number(s.errors.mae), s.test_rows);
    std::vector<std::string> names, rows;
    for (const auto& name : s.class_names) names.push_back(json_string(name));
    for (int64_t actual = 0; actual < s.classes.classes; ++actual) {
        std::vector<int64_t> row;
        for (int64_t predicted = 0; predicted < s.classes.classes; ++predicted)
            row.push_back(s.classes.at(actual, predicted));
        rows.push_back(fmt::format("[{}]", fmt::join(row, ", ")));
    }
    return fmt::format(
        "  \"test_accuracy\": {},\n  \"test_correct\": {},\n  \"test_rows\": {},\n"
        "  \"confusion_matrix\": {{\"labels\": [{}], \"rows_actual_columns_predicted\": [{}]}},\n",
        json_number(s.classes.accuracy()), s.classes.correct(), s.classes.total(), fmt::join(names, ", "),
        fmt::join(rows, ", "));
}

std::string task_summary_json(const RunSummary& s) {
    return fmt::format(
        "{{\n  \"task\": {},\n  \"backend\": {},\n  \"data\": {},\n  \"model\": {},\n  \"loss\": {},\n"
        "  \"dtype\": {},\n  \"epochs\": {},\n  \"test_loss\": {},\n{}"
        "  \"samples_trained\": {},\n  \"train_seconds\": {},\n  \"train_samples_per_second\": {},\n"
        "  \"processes\": {},\n  \"host_threads\": {},\n  \"steps\": {},\n  \"combine_seconds\": {}\n}}\n",
        json_string(task_name(s.task)), json_string(s.backend), json_string(s.data), json_string(s.model),
        json_string(s.loss), json_string(s.dtype), s.last.epoch, json_number(s.last.test_loss), task_json(s),
        s.samples_trained, json_number(s.train_seconds), json_number(s.samples_per_second), s.processes,
        s.host_threads, s.steps, json_number(s.combine_seconds));
}

}  // namespace

std::string summary_text(const RunSummary& s) {
    if (s.task == Task::kMulticlass) return class_summary_text(s) + throughput_text(s);
    if (s.task == Task::kRegression)
        return fmt::format("Test RMSE: {:.3f}, MAE: {:.3f} (target units, {} test rows), test loss {:.4f}\n",
                           s.errors.rmse, s.errors.mae, s.test_rows, s.last.test_loss) +
               throughput_text(s);
    const auto& c = s.confusion.counts;
    // Label names come from the data file: printed escaped.
    const std::array<std::string, 2> names = {nnplug::escaped(s.label_names[0]),
                                              nnplug::escaped(s.label_names[1])};
    const size_t name_width = std::max<size_t>({names[0].size(), names[1].size(), 6}) + 2;
    std::string text = fmt::format("Test accuracy: {:.2f}% ({} of {}), ROC AUC {:.4f}, test loss {:.4f}\n",
                                   100.0 * s.confusion.accuracy(), c[0][0] + c[1][1], s.confusion.total(),
                                   s.last.test_roc_auc, s.last.test_loss);
    text += "Confusion matrix (rows: actual, columns: predicted)\n";
    text += fmt::format("  {:<{}}{:>{}}{:>{}}\n", "", name_width, names[0], name_width, names[1], name_width);
    for (int actual = 0; actual < 2; ++actual)
        text += fmt::format("  {:<{}}{:>{}}{:>{}}\n", names[static_cast<size_t>(actual)], name_width,
                            c[actual][0], name_width, c[actual][1], name_width);
    return text + throughput_text(s);
}

std::string summary_json(const RunSummary& s) {
    if (s.task != Task::kBinary) return task_summary_json(s);
    const auto& c = s.confusion.counts;
    return fmt::format(
        "{{\n  \"backend\": {},\n  \"data\": {},\n  \"model\": {},\n  \"loss\": {},\n  \"dtype\": {},\n"
        "  \"epochs\": {},\n"
        "  \"test_accuracy\": {},\n  \"test_loss\": {},\n  \"test_roc_auc\": {},\n"
        "  \"confusion_matrix\": {{\"labels\": [{}, {}], \"rows_actual_columns_predicted\": [[{}, {}], [{}, "
        "{}]]}},\n"
        "  \"samples_trained\": {},\n  \"train_seconds\": {},\n  \"train_samples_per_second\": {},\n"
        "  \"processes\": {},\n  \"host_threads\": {},\n  \"steps\": {},\n  \"combine_seconds\": {}\n}}\n",
        json_string(s.backend), json_string(s.data), json_string(s.model), json_string(s.loss),
        json_string(s.dtype), s.last.epoch, json_number(s.confusion.accuracy()),
        json_number(s.last.test_loss), json_number(s.last.test_roc_auc), json_string(s.label_names[0]),
        json_string(s.label_names[1]), c[0][0], c[0][1], c[1][0], c[1][1], s.samples_trained,
        json_number(s.train_seconds), json_number(s.samples_per_second), s.processes, s.host_threads, s.steps,
        json_number(s.combine_seconds));
}

}  // namespace train
