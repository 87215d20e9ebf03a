// What a run learns: a binary classifier (the breast-cancer job), a classifier of C
// classes (digits) or a regression (diabetes). The task decides the model's output
// layer, the losses that fit it, the targets a data file holds and the metrics reported.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace train {

enum class Task { kBinary, kMulticlass, kRegression };

// "binary", "multiclass" or "regression" (the config's `task`).
const char* task_name(Task task);
// The inverse of task_name; throws std::invalid_argument for any other word.
Task task_named(const std::string& name);
// Every task word, in the order above.
const std::vector<std::string>& task_names();

// The config's `loss` words a task takes; the first is its default.
const std::vector<std::string>& task_losses(Task task);
// The task whose losses hold the word, if any.
std::optional<Task> task_of_loss(const std::string& loss);

// The multi-class losses: the ops that compute them.
//   kCrossEntropy  aclnnCrossEntropyLoss / aclnnCrossEntropyLossGrad on logits
//   kNll           aclnnNLLLoss / aclnnNLLLossBackward on log-probabilities (the model
//                  ends in a log-softmax computed on the host)
enum class ClassLoss { kCrossEntropy, kNll };
// The regression losses: mse (aclnnMseLoss), l1 (aclnnL1Loss), smooth_l1 (aclnnSmoothL1Loss
// with beta) and huber (delta * smooth_l1 with beta = delta, through aclnnSmoothL1Loss).
enum class RegressionLoss { kMse, kL1, kSmoothL1, kHuber };

// The config's word for each; throw std::invalid_argument for a word of another task.
ClassLoss class_loss(const std::string& name);
RegressionLoss regression_loss(const std::string& name);

}  // namespace train
