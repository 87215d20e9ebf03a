#include "task.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

namespace train {

const char* task_name(Task task) {
    switch (task) {
        case Task::kBinary:
            return "binary";
        case Task::kMulticlass:
            return "multiclass";
        case Task::kRegression:
            return "regression";
    }
    return "binary";
}

const std::vector<std::string>& task_names() {
    static const std::vector<std::string> names = {"binary", "multiclass", "regression"};
    return names;
}

Task task_named(const std::string& name) {
    for (const Task task : {Task::kBinary, Task::kMulticlass, Task::kRegression})
        if (name == task_name(task)) return task;
    throw std::invalid_argument(
        fmt::format("task '{}' is not one of {}", name, fmt::join(task_names(), ", ")));
}

const std::vector<std::string>& task_losses(Task task) {
    static const std::vector<std::string> binary = {"bce_with_logits", "bce"};
    static const std::vector<std::string> multiclass = {"cross_entropy", "nll"};
    static const std::vector<std::string> regression = {"mse", "l1", "smooth_l1", "huber"};
    return task == Task::kBinary ? binary : task == Task::kMulticlass ? multiclass : regression;
}

std::optional<Task> task_of_loss(const std::string& loss) {
    for (const Task task : {Task::kBinary, Task::kMulticlass, Task::kRegression}) {
        const auto& losses = task_losses(task);
        if (std::find(losses.begin(), losses.end(), loss) != losses.end()) return task;
    }
    return std::nullopt;
}

ClassLoss class_loss(const std::string& name) {
    if (name == "cross_entropy") return ClassLoss::kCrossEntropy;
    if (name == "nll") return ClassLoss::kNll;
    throw std::invalid_argument(fmt::format("loss '{}' is not cross_entropy or nll", name));
}

RegressionLoss regression_loss(const std::string& name) {
    if (name == "mse") return RegressionLoss::kMse;
    if (name == "l1") return RegressionLoss::kL1;
    if (name == "smooth_l1") return RegressionLoss::kSmoothL1;
    if (name == "huber") return RegressionLoss::kHuber;
    throw std::invalid_argument(fmt::format("loss '{}' is not mse, l1, smooth_l1 or huber", name));
}

}  // namespace train
