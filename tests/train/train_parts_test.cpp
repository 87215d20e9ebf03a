// The training example's parts: data loading and splitting, metrics, model gradients,
// optimizers, settings and checkpoints.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "acl_test_support.h"
#include "checkpoint.h"
#include "classification_metrics.h"
#include "communicator.h"
#include "dataset.h"
#include "device_loss.h"
#include "epoch_order.h"
#include "model.h"
#include "optimizer.h"
#include "random_stream.h"
#include "rank_agreement.h"
#include "row_kernels.h"
#include "row_table.h"
#include "run_report.h"
#include "shard_tree.h"
#include "sigmoid.h"
#include "train_settings.h"
#include "trainer.h"
#include "training_data.h"

namespace {

using nnplug::test::TempFolder;
using namespace train;

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::exception& error) {
        return error.what();
    }
    return "(no error)";
}

TEST(TrainData, LoadsTheShippedFileWithItsHeader) {
    const Dataset data = load_csv(NNPLUG_SHIPPED_DATA, "auto");
    EXPECT_EQ(data.rows(), 569);
    EXPECT_EQ(data.features.cols(), 30);
    EXPECT_EQ(data.positives(), 357);
    EXPECT_EQ(data.label_names[0], "malignant");
    EXPECT_EQ(data.label_names[1], "benign");
    EXPECT_FLOAT_EQ(data.features(0, 0), 17.99f);
    EXPECT_FLOAT_EQ(data.labels[0], 0.0f);
}

TEST(TrainData, LoadsPlainCsvWithAndWithoutHeader) {
    TempFolder folder;
    const Dataset named = load_csv(folder.write("a.csv", "x1,x2,y\n1,2,0\n3.5,-4,1\n"), "auto");
    EXPECT_EQ(named.rows(), 2);
    EXPECT_EQ(named.features.cols(), 2);
    EXPECT_FLOAT_EQ(named.features(1, 0), 3.5f);
    const Dataset bare = load_csv(folder.write("b.csv", "1,2,0\n3,4,1\n\n"), "plain");
    EXPECT_EQ(bare.rows(), 2);
    EXPECT_FLOAT_EQ(bare.labels[1], 1.0f);
}

TEST(TrainData, MalformedRowsNameFileAndLine) {
    TempFolder folder;
    const auto short_row = folder.write("short.csv", "1,2,0\n3,4\n");
    EXPECT_EQ(error_of([&] { load_csv(short_row, "auto"); }),
              short_row.string() + ":2: expected 3 values (2 features and a label), found 2");
    const auto bad_number = folder.write("number.csv", "a,b,y\n1,2,0\n1,zz,1\n");
    EXPECT_EQ(error_of([&] { load_csv(bad_number, "auto"); }),
              bad_number.string() + ":3: column 2: 'zz' is not a finite number");
    const auto bad_label = folder.write("label.csv", "1,2,0\n1,2,2\n");
    EXPECT_EQ(error_of([&] { load_csv(bad_label, "auto"); }),
              bad_label.string() + ":2: label '2' is not 0 or 1");
    const auto wrong_count = folder.write("count.csv", "3,2,no,yes\n1,2,0\n1,2,1\n");
    EXPECT_EQ(error_of([&] { load_csv(wrong_count, "auto"); }),
              wrong_count.string() + ": the header announces 3 rows, the file holds 2");
    // A header's feature count is checked against the rows before it sizes anything.
    const auto huge = folder.write("huge.csv", "2,77777777777700000,no,yes\n1,2,0\n1,2,1\n");
    EXPECT_EQ(error_of([&] { load_csv(huge, "auto"); }),
              huge.string() +
                  ":2: expected 77777777777700001 values (77777777777700000 features and a label), found 3");
    const auto empty = folder.write("empty.csv", "\n");
    EXPECT_EQ(error_of([&] { load_csv(empty, "auto"); }), empty.string() + ": the file holds no rows");
    EXPECT_NE(error_of([&] { load_csv(folder.path() / "missing.csv", "auto"); }).find("cannot open"),
              std::string::npos);
}

// A NUL, a byte that is not UTF-8 or a UTF-16 file is named as such, every byte escaped: the
// message ended at the NUL ("label '1") before, and a UTF-16 file gave "column 1: '".
TEST(TrainData, NulBytesAndFilesNotInUtf8AreNamedAsSuch) {
    TempFolder folder;
    const auto nul = folder.write("nul.csv", std::string("1,2,0\n3,4,1\0x\n", 14));
    EXPECT_EQ(error_of([&] { load_csv(nul, "auto"); }),
              nul.string() + ":2: byte 6 (\\x00) is a NUL; a data file is UTF-8 (or ASCII) text");
    const auto latin1 = folder.write("latin1.csv", "caf\xe9,y\n1,0\n");
    EXPECT_EQ(error_of([&] { load_csv(latin1, "auto"); }),
              latin1.string() + ":1: byte 4 (\\xe9) is not UTF-8; a data file is UTF-8 (or ASCII) text");
    std::string wide = "\xff\xfe";
    for (const char c : std::string("x,y\n1,0\n")) wide += std::string(1, c) + '\0';
    const auto utf16 = folder.write("wide.csv", wide);
    EXPECT_EQ(
        error_of([&] { load_csv(utf16, "auto"); }),
        utf16.string() +
            ": the file is UTF-16 (it starts with a byte order mark); a data file is UTF-8 (or ASCII) text");
    const auto unmarked = folder.write("unmarked.csv", wide.substr(2));
    EXPECT_EQ(error_of([&] { load_csv(unmarked, "auto"); }),
              unmarked.string() +
                  ": the file is UTF-16 (NUL bytes between the characters of its first line); a data file is "
                  "UTF-8 (or ASCII) text");
    const auto escape = folder.write("escape.csv", "1,2,0\n1,\x1b[2J,1\n");
    EXPECT_EQ(error_of([&] { load_csv(escape, "auto"); }),
              escape.string() + ":2: column 2: '\\x1b[2J' is not a finite number");
    // A field of megabytes is quoted by its first 256 bytes and its length (a 50 MiB field
    // made a 52 MB message).
    const auto wide_field = folder.write("field.csv", "1,2,0\n1," + std::string(1 << 20, 'z') + ",1\n");
    EXPECT_EQ(error_of([&] { load_csv(wide_field, "auto"); }),
              wide_field.string() + ":2: column 2: '" + std::string(256, 'z') +
                  "... (1048576 bytes)' is not a finite number");
    // UTF-8 text, its byte order mark included, is read.
    const Dataset marked = load_csv(folder.write("bom.csv", "\xef\xbb\xbfx\xc3\xa9,y\n1,0\n2,1\n"), "auto");
    EXPECT_EQ(marked.rows(), 2);
}

TEST(TrainData, SplitIsStratifiedDeterministicAndDisjoint) {
    const Dataset data = load_csv(NNPLUG_SHIPPED_DATA, "auto");
    const TrainTestSplit a = split_stratified(data, 0.2, 7);
    const TrainTestSplit b = split_stratified(data, 0.2, 7);
    const TrainTestSplit c = split_stratified(data, 0.2, 8);
    EXPECT_EQ(a.test.rows(), 42 + 71);  // 20% of 212 and of 357, rounded
    EXPECT_EQ(a.test.positives(), 71);
    EXPECT_EQ(a.train.rows() + a.test.rows(), 569);
    EXPECT_TRUE(a.train.features == b.train.features && a.test.labels == b.test.labels);
    EXPECT_FALSE(a.test.features == c.test.features);
    // Every row lands in exactly one part: the column sums add up to the whole.
    const Eigen::RowVectorXd whole = data.features.cast<double>().colwise().sum();
    const Eigen::RowVectorXd parts =
        a.train.features.cast<double>().colwise().sum() + a.test.features.cast<double>().colwise().sum();
    EXPECT_LT((whole - parts).cwiseAbs().maxCoeff(), 1e-6 * whole.cwiseAbs().maxCoeff());
}

TEST(TrainData, StandardizerUsesTheTrainingSplitOnly) {
    FeatureMatrix train(4, 2), test(1, 2);
    train << 1, 10, 3, 10, 5, 10, 7, 10;
    test << 100, 3;
    const Standardizer standardizer = Standardizer::fit(train);
    EXPECT_FLOAT_EQ(standardizer.mean[0], 4.0f);
    EXPECT_FLOAT_EQ(standardizer.scale[0], std::sqrt(5.0f));
    EXPECT_FLOAT_EQ(standardizer.scale[1], 1.0f);  // constant feature
    standardizer.apply(test);
    EXPECT_FLOAT_EQ(test(0, 0), 96.0f / std::sqrt(5.0f));
    EXPECT_FLOAT_EQ(test(0, 1), -7.0f);
}

TEST(TrainData, SyntheticSetIsReproducibleAndNoisy) {
    const Dataset a = make_synthetic({2000, 5}, 0.5, 3);
    const Dataset b = make_synthetic({2000, 5}, 0.5, 3);
    EXPECT_EQ(data_fingerprint(a), data_fingerprint(b));
    EXPECT_NE(data_fingerprint(a), data_fingerprint(make_synthetic({2000, 5}, 0.5, 4)));
    const double positive_share = static_cast<double>(a.positives()) / 2000.0;
    EXPECT_GT(positive_share, 0.4);
    EXPECT_LT(positive_share, 0.6);
}

TEST(TrainMetrics, RocAucCountsTiesAsHalf) {
    const float labels[] = {0, 0, 1, 1};
    const float perfect[] = {0.1f, 0.2f, 0.8f, 0.9f};
    const float inverted[] = {0.9f, 0.8f, 0.2f, 0.1f};
    const float tied[] = {0.5f, 0.5f, 0.5f, 0.5f};
    const float mixed[] = {0.1f, 0.4f, 0.35f, 0.8f};  // pairs: 3 of 4 ordered right
    EXPECT_DOUBLE_EQ(roc_auc(perfect, labels, 4), 1.0);
    EXPECT_DOUBLE_EQ(roc_auc(inverted, labels, 4), 0.0);
    EXPECT_DOUBLE_EQ(roc_auc(tied, labels, 4), 0.5);
    EXPECT_DOUBLE_EQ(roc_auc(mixed, labels, 4), 0.75);
    EXPECT_TRUE(std::isnan(roc_auc(perfect, labels, 2)));  // one class only
}

TEST(TrainMetrics, RocAucSortsNanScoresLast) {
    // A diverged model scores NaN; the sort must still see a strict weak order.
    std::vector<float> scores(2000), labels(2000);
    for (size_t i = 0; i < scores.size(); ++i) {
        scores[i] = i % 3 == 0 ? NAN : static_cast<float>(i % 17) / 17.0f;
        labels[i] = static_cast<float>(i % 2);
    }
    const double auc = roc_auc(scores.data(), labels.data(), static_cast<int64_t>(scores.size()));
    EXPECT_GE(auc, 0.0);
    EXPECT_LE(auc, 1.0);
    const float nan_only[] = {NAN, NAN, NAN, NAN};
    const float labels4[] = {0, 1, 0, 1};
    EXPECT_DOUBLE_EQ(roc_auc(nan_only, labels4, 4), 0.5);
}

TEST(TrainMetrics, ConfusionMatrixRowsAreActualClasses) {
    const float labels[] = {0, 0, 1, 1, 1};
    const float scores[] = {0.2f, 0.7f, 0.5f, 0.1f, 0.9f};
    ConfusionMatrix confusion;
    confusion.add(scores, labels, 5);
    EXPECT_EQ(confusion.counts[0][0], 1);
    EXPECT_EQ(confusion.counts[0][1], 1);
    EXPECT_EQ(confusion.counts[1][0], 1);
    EXPECT_EQ(confusion.counts[1][1], 2);
    EXPECT_DOUBLE_EQ(confusion.accuracy(), 0.6);
}

// Mean weighted BCE of the model on (x, y), in double, as the device computes it.
double host_loss(Model& model, const FeatureMatrix& x, const Eigen::VectorXf& y, const Eigen::VectorXf& w) {
    const Eigen::VectorXf& p = model.forward(x.data(), x.rows());
    double sum = 0;
    for (Eigen::Index i = 0; i < y.size(); ++i)
        sum -= w[i] * (y[i] * std::log(static_cast<double>(p[i])) + (1 - y[i]) * std::log(1.0 - p[i]));
    return sum / static_cast<double>(y.size());
}

TEST(TrainRandom, EpochOrderIsAPermutationWhateverTheThreads) {
    for (const size_t rows : {size_t{0}, size_t{1}, size_t{2}, size_t{63}, size_t{65}, size_t{100000}}) {
        std::vector<std::vector<int64_t>> orders;
        for (const int threads : {1, 2, 3}) {
            tbb::task_arena arena(threads);
            EpochOrder order(rows);
            order.draw(12345, arena);
            orders.push_back(order.order());
        }
        EXPECT_EQ(orders[0], orders[1]) << rows << " rows";
        EXPECT_EQ(orders[0], orders[2]) << rows << " rows";
        std::vector<int64_t> sorted = orders[0];
        std::sort(sorted.begin(), sorted.end());
        std::vector<int64_t> identity(rows);
        std::iota(identity.begin(), identity.end(), 0);
        EXPECT_EQ(sorted, identity) << rows << " rows";
    }
    tbb::task_arena arena(2);
    EpochOrder first(1000), second(1000);
    first.draw(1, arena);
    second.draw(2, arena);
    EXPECT_NE(first.order(), second.order());
}

TEST(TrainRandom, EpochOrderPutsEveryRowEverywhereEquallyOften) {
    // Over 24,000 seeds, each of 6 rows lands in each of the 6 places about 4,000 times:
    // the chi-square statistic of the 36 counts stays below its 99.99th percentile for 25
    // degrees of freedom (60.14). Fixed seeds, so the outcome is fixed too.
    constexpr int kRows = 6, kSeeds = 24000;
    tbb::task_arena arena(1);
    EpochOrder order(kRows);
    std::array<std::array<int, kRows>, kRows> counts{};
    for (int seed = 0; seed < kSeeds; ++seed) {
        order.draw(static_cast<uint64_t>(seed) * 7919u, arena);
        for (int place = 0; place < kRows; ++place)
            ++counts[static_cast<size_t>(order.order()[static_cast<size_t>(place)])][place];
    }
    const double expected = static_cast<double>(kSeeds) / kRows;
    double chi_square = 0;
    for (const auto& row : counts)
        for (const int count : row) chi_square += (count - expected) * (count - expected) / expected;
    EXPECT_LT(chi_square, 60.14);
}

TEST(TrainRandom, EpochOrderPlacesTwoRowsIndependently) {
    // Rows drawn from one word of a piece's stream (0 and 1, 5 and 6) and rows of two
    // pieces (0 and 1999): over 20,000 seeds, the quarters of the order the two land in
    // follow a uniform permutation's odds; the chi-square statistic of the 16 counts stays
    // below its 99.99th percentile for 15 degrees of freedom (44.26).
    constexpr int kRows = 2000, kSeeds = 20000, kQuarter = kRows / 4;
    tbb::task_arena arena(1);
    EpochOrder order(kRows);
    const std::array<std::pair<int64_t, int64_t>, 3> pairs{{{0, 1}, {5, 6}, {0, 1999}}};
    std::array<std::array<std::array<int, 4>, 4>, 3> counts{};
    std::vector<int64_t> place(kRows);
    for (int seed = 0; seed < kSeeds; ++seed) {
        order.draw(static_cast<uint64_t>(seed) * 104729u + 3, arena);
        for (int64_t at = 0; at < kRows; ++at)
            place[static_cast<size_t>(order.order()[static_cast<size_t>(at)])] = at;
        for (size_t p = 0; p < pairs.size(); ++p)
            ++counts[p][static_cast<size_t>(place[static_cast<size_t>(pairs[p].first)] / kQuarter)]
                    [static_cast<size_t>(place[static_cast<size_t>(pairs[p].second)] / kQuarter)];
    }
    for (size_t p = 0; p < pairs.size(); ++p) {
        double chi_square = 0;
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) {
                const double odds = (a == b ? kQuarter * (kQuarter - 1.0) : kQuarter * double{kQuarter}) /
                                    (kRows * (kRows - 1.0));
                const double expected = kSeeds * odds;
                const double difference =
                    counts[p][static_cast<size_t>(a)][static_cast<size_t>(b)] - expected;
                chi_square += difference * difference / expected;
            }
        EXPECT_LT(chi_square, 44.26) << "rows " << pairs[p].first << " and " << pairs[p].second;
    }
}

TEST(TrainCombine, TreeBlocksTileTheRangeWithAlignedPowersOfTwo) {
    EXPECT_TRUE(tree_blocks(5, 5).empty());
    const std::vector<TreeBlock> blocks = tree_blocks(85, 170);
    const std::vector<std::pair<int64_t, int64_t>> expected{{85, 1},   {86, 2},  {88, 8}, {96, 32},
                                                            {128, 32}, {160, 8}, {168, 2}};
    ASSERT_EQ(blocks.size(), expected.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
        EXPECT_EQ(blocks[i].first, expected[i].first);
        EXPECT_EQ(blocks[i].size, expected[i].second);
    }
    ASSERT_EQ(tree_blocks(0, 256).size(), 1u);
    EXPECT_EQ(tree_width(1), 1);
    EXPECT_EQ(tree_width(20), 32);
    EXPECT_EQ(tree_levels(256), 9);
}

TEST(TrainCombine, TreeSumIsTheSameBytesHoweverTheShardsAreSplit) {
    // Leaves whose sum depends on the order of the additions (values of very different
    // sizes): the root from any split into ranks' blocks must equal the one from a single
    // range, bit for bit.
    constexpr size_t kValues = 3;
    RandomStream random(21);
    for (int64_t shards = 1; shards <= 40; ++shards) {
        std::vector<std::array<float, kValues>> leaves(static_cast<size_t>(shards));
        for (auto& leaf : leaves)
            for (float& value : leaf)
                value = (random.uniform() - 0.5f) * std::ldexp(1.0f, static_cast<int>(random.below(40)) - 20);
        const auto leaf = [&](int64_t s) -> const float* { return leaves[static_cast<size_t>(s)].data(); };
        const auto root_of_split = [&](int ranks) {
            // Each rank's blocks from its leaves, then the root from all blocks.
            std::map<std::pair<int64_t, int64_t>, std::array<double, kValues>> known;
            double scratch[kValues * 9];
            for (int r = 0; r < ranks; ++r)
                for (const TreeBlock& block : tree_blocks(shards * r / ranks, shards * (r + 1) / ranks))
                    tree_sum(
                        block.first, block.size, shards, leaf,
                        [](int64_t, int64_t) -> const double* { return nullptr; }, 0, kValues,
                        known[{block.first, block.size}].data(), scratch);
            std::array<double, kValues> root{};
            tree_sum(
                0, tree_width(shards), shards,
                [](int64_t) -> const double* { throw std::logic_error("a leaf outside every block"); },
                [&](int64_t first, int64_t size) -> const double* {
                    const auto found = known.find({first, size});
                    return found == known.end() ? nullptr : found->second.data();
                },
                0, kValues, root.data(), scratch);
            return root;
        };
        const std::array<double, kValues> alone = root_of_split(1);
        for (int ranks = 2; ranks <= 7; ++ranks) {
            const std::array<double, kValues> split = root_of_split(ranks);
            EXPECT_EQ(std::memcmp(alone.data(), split.data(), sizeof(alone)), 0)
                << shards << " shards, " << ranks << " ranks";
        }
        double plain = 0;
        for (const auto& values : leaves) plain += static_cast<double>(values[0]);
        EXPECT_NEAR(alone[0], plain, 1e-9 * std::ldexp(1.0, 20)) << shards << " shards";
    }
}

TEST(TrainModel, MlpGradientsMatchFiniteDifferences) {
    RandomStream random(5);
    FeatureMatrix x(6, 3);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = 2 * random.uniform() - 1;
    Eigen::VectorXf y(6), w(6);
    y << 0, 1, 1, 0, 1, 0;
    w << 1, 2, 1, 0.5f, 1, 1;
    Model model(3, {4, 3});
    model.initialize(random);
    // dL/dp of the mean weighted BCE: w * (p - y) / (p (1 - p)) / N.
    const Eigen::VectorXf p = model.forward(x.data(), x.rows());
    Eigen::VectorXf grad_p(6);
    for (int i = 0; i < 6; ++i) grad_p[i] = w[i] * (p[i] - y[i]) / (p[i] * (1 - p[i])) / 6.0f;
    model.backward(grad_p.data());
    const std::vector<float> analytic = model.gradients();
    ASSERT_EQ(analytic.size(), 3u * 4 + 4 + 4 * 3 + 3 + 3 * 1 + 1);
    for (size_t k = 0; k < analytic.size(); ++k) {
        const float saved = model.parameters()[k];
        const float h = 1e-2f;
        model.parameters()[k] = saved + h;
        const double up = host_loss(model, x, y, w);
        model.parameters()[k] = saved - h;
        const double down = host_loss(model, x, y, w);
        model.parameters()[k] = saved;
        EXPECT_NEAR(analytic[k], (up - down) / (2 * h), 2e-3) << "parameter " << k;
    }
}

// Mean weighted BCE on logits, in double: w * [(1 - y) z - (1 + (p - 1) y) log sigmoid(z)].
double host_logit_loss(Model& model, const FeatureMatrix& x, const Eigen::VectorXf& y,
                       const Eigen::VectorXf& w, double pos_weight) {
    const Eigen::VectorXf& z = model.forward(x.data(), x.rows());
    double sum = 0;
    for (Eigen::Index i = 0; i < y.size(); ++i) {
        const double logit = z[i];
        const double log_sigmoid = std::min(logit, 0.0) - std::log1p(std::exp(-std::abs(logit)));
        sum += w[i] * ((1 - y[i]) * logit - (1 + (pos_weight - 1) * y[i]) * log_sigmoid);
    }
    return sum / static_cast<double>(y.size());
}

// A tiny MLP, its batch and the parameters' central differences of a double loss.
struct TinyProblem {
    FeatureMatrix x{6, 3};
    Eigen::VectorXf y{6}, w{6};
    TinyProblem() {
        RandomStream random(5);
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = 2 * random.uniform() - 1;
        y << 0, 1, 1, 0, 1, 0;
        w << 1, 2, 1, 0.5f, 1, 1;
    }
    Model model(ModelOutput output) const {
        RandomStream random(5);
        for (Eigen::Index i = 0; i < x.size(); ++i) random.uniform();  // as the MLP test draws them
        Model m(3, {4, 3}, output);
        m.initialize(random);
        return m;
    }
    template <typename Loss>
    static std::vector<double> finite_differences(Model& model, const Loss& loss) {
        std::vector<double> result;
        for (size_t k = 0; k < model.parameters().size(); ++k) {
            const float saved = model.parameters()[k];
            const float h = 1e-2f;
            model.parameters()[k] = saved + h;
            const double up = loss(model);
            model.parameters()[k] = saved - h;
            const double down = loss(model);
            model.parameters()[k] = saved;
            result.push_back((up - down) / (2 * h));
        }
        return result;
    }
};

TEST(TrainModel, LogitOutputGradientsMatchFiniteDifferences) {
    const TinyProblem problem;
    for (const double pos_weight : {1.0, 2.5}) {
        Model model = problem.model(ModelOutput::kLogit);
        // dL/dz of the mean weighted BCE on logits: w * (sigmoid(z) (1 + (p - 1) y) - p y) / N.
        const Eigen::VectorXf z = model.forward(problem.x.data(), problem.x.rows());
        const Eigen::VectorXf probabilities = model.probabilities();
        Eigen::VectorXf grad_z(6);
        for (int i = 0; i < 6; ++i) {
            const double s = 1 / (1 + std::exp(-static_cast<double>(z[i])));
            EXPECT_NEAR(probabilities[i], s, 1e-6);
            grad_z[i] = static_cast<float>(
                problem.w[i] * (s * (1 + (pos_weight - 1) * problem.y[i]) - pos_weight * problem.y[i]) / 6.0);
        }
        model.backward(grad_z.data());
        const std::vector<float> analytic = model.gradients();
        const auto numeric = TinyProblem::finite_differences(
            model, [&](Model& m) { return host_logit_loss(m, problem.x, problem.y, problem.w, pos_weight); });
        ASSERT_EQ(analytic.size(), numeric.size());
        for (size_t k = 0; k < analytic.size(); ++k)
            EXPECT_NEAR(analytic[k], numeric[k], 2e-3) << "pos_weight " << pos_weight << ", parameter " << k;
    }
}

// True when aclInit can load the named backend (it may not be built).
bool backend_available(const std::string& name) {
    TempFolder folder;
    const auto config = folder.write("probe.yaml", "backend: " + name + "\n");
    nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
    if (aclInit(config.c_str()) != ACL_SUCCESS) return false;
    aclFinalize();
    return true;
}

// body(backend) inside an AclSession on cpu_tbb, then on atlas_emu when it is built.
void in_each_backend_session(const std::function<void(const std::string&)>& body) {
    for (const std::string backend : {"cpu_tbb", "atlas_emu"}) {
        if (!backend_available(backend)) {
            EXPECT_NE(backend, "cpu_tbb") << "the default backend must load";
            continue;
        }
        TempFolder folder;
        nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
        AclSession session(folder.write("device.yaml", "backend: " + backend + "\n").c_str());
        body(backend);
    }
}

// The gradient that comes back from the device, through the model on the host, against a
// float64 central difference of the loss; the device's loss against the float64 loss.
TEST(TrainDeviceLoss, BothLossesGiveTheFiniteDifferenceGradientOnEveryBackend) {
    const TinyProblem problem;
    const double pos_weight = 2.5;
    in_each_backend_session([&](const std::string& backend) {
        for (const LossKind kind : {LossKind::kBceWithLogits, LossKind::kBce}) {
            const bool logits = kind == LossKind::kBceWithLogits;
            SCOPED_TRACE(backend + (logits ? ", bce_with_logits" : ", bce"));
            // bce has no posWeight: for 0/1 labels it is the positives' weight times pos_weight.
            Eigen::VectorXf weights = problem.w;
            if (!logits)
                for (int i = 0; i < 6; ++i)
                    if (problem.y[i] == 1.0f) weights[i] *= static_cast<float>(pos_weight);
            DeviceBceLoss loss(8, kind,
                               logits ? std::optional<float>(static_cast<float>(pos_weight)) : std::nullopt);
            Model model = problem.model(logits ? ModelOutput::kLogit : ModelOutput::kProbability);
            const Eigen::VectorXf outputs = model.forward(problem.x.data(), problem.x.rows());
            Eigen::VectorXf grad_outputs(6);
            const float device_loss =
                loss.run(outputs.data(), problem.y.data(), weights.data(), 6, grad_outputs.data());
            const auto double_loss = [&](Model& m) {
                return logits ? host_logit_loss(m, problem.x, problem.y, problem.w, pos_weight)
                              : host_loss(m, problem.x, problem.y, weights);
            };
            EXPECT_NEAR(device_loss, double_loss(model), 1e-5 * double_loss(model));
            model.forward(problem.x.data(), problem.x.rows());
            model.backward(grad_outputs.data());
            const std::vector<float> analytic = model.gradients();
            const auto numeric = TinyProblem::finite_differences(model, double_loss);
            for (size_t k = 0; k < analytic.size(); ++k)
                EXPECT_NEAR(analytic[k], numeric[k], 2e-3) << "parameter " << k;
        }
    });
}

// Executors made ahead (prepare) are the ones a first call would make: the same bytes, with
// or without them, and with only the forward's made ahead; a size beyond the buffers is
// refused by name.
TEST(TrainDeviceLoss, ExecutorsMadeAheadGiveTheBytesOfExecutorsMadeOnFirstUse) {
    const TinyProblem problem;
    in_each_backend_session([&](const std::string& backend) {
        for (const LossKind kind : {LossKind::kBceWithLogits, LossKind::kBce}) {
            SCOPED_TRACE(backend + (kind == LossKind::kBce ? ", bce" : ", bce_with_logits"));
            Model model =
                problem.model(kind == LossKind::kBce ? ModelOutput::kProbability : ModelOutput::kLogit);
            const Eigen::VectorXf outputs = model.forward(problem.x.data(), problem.x.rows());
            const auto results = [&](int prepared) {
                DeviceBceLoss loss(8, kind);
                if (prepared > 0) loss.prepare(6, prepared == 2);
                std::vector<float> losses(6), gradient(6);
                loss.run_samples(outputs.data(), problem.y.data(), problem.w.data(), 6, losses.data(),
                                 gradient.data(), 0.25f);
                losses.insert(losses.end(), gradient.begin(), gradient.end());
                return losses;
            };
            const std::vector<float> on_first_use = results(0);
            for (const int prepared : {1, 2}) {
                const std::vector<float> ahead = results(prepared);
                EXPECT_EQ(std::memcmp(ahead.data(), on_first_use.data(), ahead.size() * sizeof(float)), 0)
                    << (prepared == 2 ? "forward and backward made ahead" : "forward made ahead");
            }
            DeviceBceLoss loss(8, kind);
            EXPECT_EQ(error_of([&] { loss.prepare(9, true); }),
                      "executors for 9 samples on a loss of capacity 8");
            EXPECT_EQ(error_of([&] { loss.prepare(0, false); }),
                      "executors for 0 samples on a loss of capacity 8");
        }
    });
}

// Shards of a batch: each one's gradient depends on its rows only, so shards computed on
// other threads, in another order, or from scattered rows (with an index) give the same
// bytes; their sum is the whole batch's gradient.
TEST(TrainModel, ShardsGiveTheSameBytesInAnyOrderAndSumToTheBatchGradient) {
    for (const std::vector<int64_t>& hidden : {std::vector<int64_t>{}, std::vector<int64_t>{16, 8}}) {
        SCOPED_TRACE(hidden.empty() ? "logistic regression" : "MLP");
        constexpr int64_t kRows = 300, kInputs = 13, kShard = 64;
        RandomStream random(7);
        FeatureMatrix data(2 * kRows, kInputs);  // the batch's rows are scattered over twice as many
        for (Eigen::Index i = 0; i < data.size(); ++i) data.data()[i] = 2 * random.uniform() - 1;
        std::vector<int64_t> index(kRows);
        for (int64_t k = 0; k < kRows; ++k) index[static_cast<size_t>(k)] = (k * 7 + 3) % (2 * kRows);
        FeatureMatrix gathered(kRows, kInputs);
        for (int64_t k = 0; k < kRows; ++k) gathered.row(k) = data.row(index[static_cast<size_t>(k)]);
        std::vector<float> grad_outputs(kRows);
        for (auto& g : grad_outputs) g = (random.uniform() - 0.5f) / kRows;

        Model model(kInputs, hidden, ModelOutput::kLogit);
        model.initialize(random);
        const size_t parameters = model.parameters().size();
        const int64_t shards = (kRows + kShard - 1) / kShard;
        const auto shard_gradients = [&](const BatchRows& rows, bool reverse_on_threads) {
            Model copy = model;
            copy.reserve(kRows);
            std::vector<float> records(static_cast<size_t>(shards) * parameters);
            const auto run = [&](int64_t s) {
                const int64_t begin = s * kShard, end = std::min(kRows, begin + kShard);
                copy.forward_shard(rows, begin, end);
                copy.backward_shard(rows, grad_outputs.data(), begin, end, records.data() + s * parameters);
            };
            if (!reverse_on_threads) {
                for (int64_t s = 0; s < shards; ++s) run(s);
            } else {
                std::vector<std::thread> threads;
                for (int64_t s = shards; s-- > 0;) threads.emplace_back(run, s);
                for (auto& thread : threads) thread.join();
            }
            return records;
        };
        const std::vector<float> in_order = shard_gradients(BatchRows{gathered.data(), nullptr}, false);
        EXPECT_TRUE(shard_gradients(BatchRows{gathered.data(), nullptr}, true) == in_order);
        EXPECT_TRUE(shard_gradients(BatchRows{data.data(), index.data()}, true) == in_order);
        // Rows padded to whole cache lines, read ahead across the shards' ends.
        const RowTable table(data.data(), 2 * kRows, kInputs);
        EXPECT_TRUE(shard_gradients(BatchRows{table.data(), index.data(), table.stride(), kRows}, true) ==
                    in_order);
        const RowTable gathered_table(gathered.data(), kRows, kInputs);
        EXPECT_TRUE(shard_gradients(BatchRows{gathered_table.data(), nullptr, gathered_table.stride()},
                                    false) == in_order);

        // The whole batch at once, against the shards' sum.
        Model whole = model;
        whole.forward(gathered.data(), kRows);
        whole.backward(grad_outputs.data());
        for (size_t i = 0; i < parameters; ++i) {
            double sum = 0;
            for (int64_t s = 0; s < shards; ++s) sum += in_order[static_cast<size_t>(s) * parameters + i];
            EXPECT_NEAR(sum, whole.gradients()[i], 1e-5 * (1 + std::abs(whole.gradients()[i])))
                << "parameter " << i;
        }
    }
}

TEST(TrainData, RowTableStartsEveryRowOnACacheLine) {
    for (const int64_t columns : {1, 13, 16, 64, 65}) {
        SCOPED_TRACE(fmt::format("{} columns", columns));
        constexpr int64_t kRows = 37;
        std::vector<float> source(static_cast<size_t>(kRows * columns));
        std::iota(source.begin(), source.end(), 1.0f);
        RowTable table(source.data(), kRows, columns);
        EXPECT_EQ(table.stride() % 16, 0);
        EXPECT_GE(table.stride(), columns);
        EXPECT_LT(table.stride(), columns + 16);
        for (int64_t i = 0; i < kRows; ++i) {
            EXPECT_EQ(reinterpret_cast<uintptr_t>(table.row(i)) % 64, 0u);
            EXPECT_EQ(std::memcmp(table.row(i), source.data() + i * columns,
                                  static_cast<size_t>(columns) * sizeof(float)),
                      0);
            for (int64_t j = columns; j < table.stride(); ++j) EXPECT_EQ(table.row(i)[j], 0.0f);
        }
        const float* rows = table.data();
        RowTable moved(std::move(table));
        EXPECT_EQ(moved.data(), rows);
        EXPECT_EQ(moved.rows(), kRows);
        EXPECT_EQ(moved.columns(), columns);
        EXPECT_EQ(table.data(), nullptr);  // NOLINT(bugprone-use-after-move): a moved-from table is empty
    }
}

TEST(TrainData, LabelBitsHoldEachRowsLabel) {
    constexpr int64_t kRows = 200;  // across several 64-bit words, the last one partial
    LabelBits labels(kRows);
    for (int64_t row = 0; row < kRows; ++row)
        if (row % 3 == 0 || row == 63 || row == 64 || row == kRows - 1) labels.set(row);
    for (int64_t row = 0; row < kRows; ++row)
        EXPECT_EQ(labels[row], (row % 3 == 0 || row == 63 || row == 64 || row == kRows - 1) ? 1u : 0u) << row;
}

TEST(TrainModel, SigmoidIsNearTheFloat64OneAndTheSameWhereverAnElementSits) {
    std::vector<float> z;
    for (int i = -12000; i <= 12000; ++i) z.push_back(static_cast<float>(i) * 0.01f);
    const float inf = std::numeric_limits<float>::infinity();
    for (const float special : {88.0f, 89.0f, 104.0f, 105.0f, 1e30f, inf, 1e-30f, 0.0f, -0.0f})
        for (const float sign : {1.0f, -1.0f}) z.push_back(sign * special);
    z.push_back(std::numeric_limits<float>::quiet_NaN());
    std::vector<float> p(z.size());
    sigmoid(z.data(), p.data(), static_cast<int64_t>(z.size()));
    double worst_ulps = 0;
    for (size_t i = 0; i < z.size(); ++i) {
        SCOPED_TRACE(fmt::format("z = {}", z[i]));
        float alone = 0;
        sigmoid(&z[i], &alone, 1);
        EXPECT_EQ(std::memcmp(&alone, &p[i], sizeof alone), 0);  // the same bits, NaN included
        if (std::isnan(z[i])) {
            EXPECT_TRUE(std::isnan(p[i]));
            continue;
        }
        const auto reference = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(z[i]))));
        if (reference < std::numeric_limits<float>::min()) {
            EXPECT_LE(p[i],
                      std::numeric_limits<float>::min());  // where exp(-z) overflows: 0 or below FLT_MIN
            continue;
        }
        const float ulp = std::nextafter(reference, inf) - reference;
        worst_ulps = std::max(worst_ulps, std::abs(static_cast<double>(p[i]) - reference) / ulp);
    }
    EXPECT_LE(worst_ulps, 4.0);
    const float ends[2] = {-inf, inf};
    float at_ends[2] = {};
    sigmoid(ends, at_ends, 2);
    EXPECT_EQ(at_ends[0], 0.0f);
    EXPECT_EQ(at_ends[1], 1.0f);
}

// The row kernels' documented order of additions, one float at a time.
float reference_logit(const float* x, const float* w, int64_t n, float bias) {
    float lane[16] = {};
    const int64_t whole = n / 16 * 16;
    for (int64_t k = 0; k < whole; k += 16)
        for (int64_t l = 0; l < 16; ++l) lane[l] += x[k + l] * w[k + l];
    float half[8], quarter[4];
    for (int l = 0; l < 8; ++l) half[l] = lane[l] + lane[l + 8];
    for (int l = 0; l < 4; ++l) quarter[l] = half[l] + half[l + 4];
    float sum = (quarter[0] + quarter[2]) + (quarter[1] + quarter[3]);
    for (int64_t k = whole; k < n; ++k) sum += x[k] * w[k];
    return sum + bias;
}

TEST(TrainModel, RowKernelsGiveTheDocumentedBitsOnEveryTargetOfThisCpu) {
    const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
    ASSERT_FALSE(targets.empty());
    RandomStream random(5);
    for (const int64_t columns : {1, 13, 16, 17, 32, 48, 64, 100, 128, 130, 300}) {
        SCOPED_TRACE(fmt::format("{} columns", columns));
        constexpr int64_t kRows = 150;
        RowTable table(kRows, columns);
        for (int64_t i = 0; i < kRows; ++i)
            for (int64_t j = 0; j < columns; ++j) table.row(i)[j] = 4.0f * random.uniform() - 2.0f;
        std::vector<float> weight(static_cast<size_t>(columns)), delta(kRows),
            start(static_cast<size_t>(columns));
        for (float& value : weight) value = 2.0f * random.uniform() - 1.0f;
        for (float& value : delta) value = random.uniform() - 0.5f;
        for (float& value : start) value = random.uniform();
        std::vector<int64_t> index(kRows);
        for (int64_t k = 0; k < kRows; ++k) index[static_cast<size_t>(k)] = (k * 37 + 11) % kRows;
        const BatchRows rows{table.data(), index.data(), table.stride(), kRows};
        const float bias = 0.25f;

        std::vector<float> expected_logits(kRows), expected_sum = start;
        std::vector<const float*> x(kRows);
        for (int64_t k = 0; k < kRows; ++k) {
            x[static_cast<size_t>(k)] = rows.row(k, columns);
            expected_logits[static_cast<size_t>(k)] =
                reference_logit(x[static_cast<size_t>(k)], weight.data(), columns, bias);
        }
        for (int64_t j = 0; j < columns; ++j)
            for (int64_t k = 0; k < kRows; ++k)
                expected_sum[static_cast<size_t>(j)] +=
                    delta[static_cast<size_t>(k)] * x[static_cast<size_t>(k)][j];

        for (const int64_t target : targets) {
            SCOPED_TRACE(hwy::TargetName(target));
            hwy::SetSupportedTargetsForTest(target);
            hwy::GetChosenTarget().Update(hwy::SupportedTargets());
            std::vector<float> logits(kRows), gathered(static_cast<size_t>(kRows * columns)), sum = start;
            // In two calls, so that the first reads ahead into the second's rows.
            row_logits(rows, 0, 70, columns, weight.data(), bias, logits.data(), gathered.data());
            row_logits(rows, 70, kRows, columns, weight.data(), bias, logits.data(), gathered.data());
            EXPECT_EQ(std::memcmp(logits.data(), expected_logits.data(), logits.size() * sizeof(float)), 0);
            for (int64_t k = 0; k < kRows; ++k)
                EXPECT_EQ(std::memcmp(gathered.data() + k * columns, x[static_cast<size_t>(k)],
                                      static_cast<size_t>(columns) * sizeof(float)),
                          0);
            add_row_products(sum.data(), delta.data(), x.data(), 64, columns);
            add_row_products(sum.data(), delta.data() + 64, x.data() + 64, kRows - 64, columns);
            EXPECT_EQ(std::memcmp(sum.data(), expected_sum.data(), sum.size() * sizeof(float)), 0);
        }
        hwy::SetSupportedTargetsForTest(0);
        hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    }
}

TEST(TrainModel, ShardRowsDependOnTheBatchSizeOnly) {
    EXPECT_EQ(shard_rows(32), 64);  // one shard: the whole batch
    EXPECT_EQ(shard_rows(256), 64);
    EXPECT_EQ(shard_rows(4096), 64);
    EXPECT_EQ(shard_rows(16384), 64);
    EXPECT_EQ(shard_rows(16385), 128);
    EXPECT_EQ(shard_rows(65536), 256);
    for (const int64_t batch : {1, 63, 64, 1000, 16384, 65536, 1 << 20, (1 << 20) + 1}) {
        EXPECT_EQ(shard_rows(batch) % 64, 0) << batch;
        EXPECT_LE((batch + shard_rows(batch) - 1) / shard_rows(batch), kMaxShards) << batch;
    }
}

TEST(TrainModel, ChunksAreWholeShardsTwoPerThreadWithinTheirLimits) {
    // Logistic regression: two chunks per thread, no fewer than 512 rows, no more than 2048.
    EXPECT_EQ(chunk_shards(4096, 2, true) * shard_rows(4096), 1024);
    EXPECT_EQ(chunk_shards(4096, 1, true) * shard_rows(4096), 2048);
    EXPECT_EQ(chunk_shards(4096, 8, true) * shard_rows(4096), 512);
    EXPECT_EQ(chunk_shards(65536, 2, true) * shard_rows(65536), 2048);
    EXPECT_EQ(chunk_shards(256, 2, true), 4);  // a batch below 512 rows: one chunk
    // An MLP's chunks go down to one shard.
    EXPECT_EQ(chunk_shards(256, 2, false), 1);
    EXPECT_EQ(chunk_shards(4096, 2, false) * shard_rows(4096), 1024);
    for (const int64_t batch : {1, 64, 1000, 4096, 16385, 65536, 1 << 20})
        for (const int threads : {1, 2, 3, 16})
            for (const bool logistic : {true, false}) {
                const int64_t shards = chunk_shards(batch, threads, logistic);
                const int64_t batch_shards = (batch + shard_rows(batch) - 1) / shard_rows(batch);
                const int64_t group = std::min(batch_shards, group_shards(batch));
                EXPECT_GE(shards, 1) << batch << " " << threads;
                EXPECT_LE(shards, group) << batch << " " << threads;  // within a group
            }
}

TEST(TrainDeviceLoss, PosWeightNeedsTheLogitsOps) {
    EXPECT_EQ(loss_kind("bce"), LossKind::kBce);
    EXPECT_EQ(loss_kind("bce_with_logits"), LossKind::kBceWithLogits);
    EXPECT_THROW(loss_kind("mse"), std::invalid_argument);
    // Checked before any runtime call: no session is needed.
    EXPECT_EQ(error_of([] { DeviceBceLoss(4, LossKind::kBce, 2.0f); }),
              "aclnnBinaryCrossEntropy takes no posWeight: fold it into the sample weights");
}

TEST(TrainOptimizer, SgdAndAdamFollowPyTorchsUpdateRules) {
    TrainSettings settings;
    settings.optimizer = "sgd";
    settings.learning_rate = 0.1;
    settings.momentum = 0.9;
    Optimizer sgd(settings, 1);
    std::vector<float> p = {1.0f};
    sgd.step(p, {0.5f});  // v = 0.5
    EXPECT_FLOAT_EQ(p[0], 0.95f);
    sgd.step(p, {0.5f});  // v = 0.9 * 0.5 + 0.5 = 0.95
    EXPECT_FLOAT_EQ(p[0], 0.855f);

    settings.optimizer = "adam";
    settings.learning_rate = 0.01;
    Optimizer adam(settings, 1);
    p = {1.0f};
    adam.step(p, {0.5f});  // first Adam step moves by lr * sign(g) (up to epsilon)
    EXPECT_NEAR(p[0], 0.99f, 1e-6);
    adam.step(p, {-0.25f});
    // m = 0.9*0.05 + 0.1*-0.25 = 0.02, v = 0.999*0.00025 + 0.001*0.0625 = 0.00031225
    const double m_hat = 0.02 / (1 - 0.81), v_hat = 0.00031225 / (1 - 0.998001);
    EXPECT_NEAR(p[0], 0.99 - 0.01 * m_hat / (std::sqrt(v_hat) + 1e-8), 1e-6);
}

TEST(TrainSettings, ReadsApplicationSectionAndOverrides) {
    TempFolder folder;
    folder.write("data.csv", "1,2,0\n3,4,1\n");
    const auto config =
        folder.write("train.yaml",
                     "backend: cpu_tbb\napplication:\n  data: {path: data.csv}\n"
                     "  optimizer: {kind: sgd, lr: 0.5}\n  model: {kind: mlp, hidden: [8, 4]}\n");
    ConfigDocument document = read_config_document(config);
    apply_override(document, "optimizer.lr=0.25");
    apply_override(document, "backends.cpu_tbb.threads=1");
    apply_override(document, "train.class_weights=[1, 3]");
    const TrainSettings settings = read_train_settings(document, {});
    EXPECT_EQ(settings.optimizer, "sgd");
    EXPECT_DOUBLE_EQ(settings.learning_rate, 0.25);
    EXPECT_EQ(settings.hidden, (std::vector<int64_t>{8, 4}));
    EXPECT_EQ(settings.class_weights, "1,3");
    EXPECT_EQ(settings.data_path, std::filesystem::canonical(folder.path() / "data.csv"));
    EXPECT_EQ(document.root["backends"]["cpu_tbb"]["threads"].as<int>(),
              1);  // a runtime key stays at the top
    const auto weights = class_weight_values("balanced", 100, 300);
    EXPECT_FLOAT_EQ(weights.first, 2.0f);
    EXPECT_FLOAT_EQ(weights.second, 400.0f / 600.0f);
}

TEST(TrainSettings, UnknownKeysAndBadValuesAreNamed) {
    TempFolder folder;
    const auto config = folder.write("train.yaml", "application:\n  optimizer:\n    lrate: 0.1\n");
    ConfigDocument document = read_config_document(config);
    EXPECT_EQ(
        error_of([&] { read_train_settings(document, {}); }),
        config.string() + ":3:12: unknown key 'application.optimizer.lrate' (did you mean 'optimizer.lr'?)");
    EXPECT_EQ(error_of([&] { apply_override(document, "train.epoch=3"); }),
              "--set 'train.epoch=3': unknown key 'train.epoch' (did you mean 'train.epochs'?)");
    ConfigDocument fresh =
        read_config_document(folder.write("ok.yaml", "application: {data: {path: x.csv}}\n"));
    apply_override(fresh, "train.batch_size=0");
    EXPECT_EQ(error_of([&] { read_train_settings(fresh, {}); }),
              "--set train.batch_size=0: key 'train.batch_size' has value '0'; expected a whole number >= 1");
    ConfigDocument missing =
        read_config_document(folder.write("m.yaml", "application: {data: {path: nowhere.csv}}\n"));
    EXPECT_NE(error_of([&] { read_train_settings(missing, {}); }).find("data file 'nowhere.csv' not found"),
              std::string::npos);
}

// A --set whose value is a mapping makes keys under its own: an error about one of them
// names that --set, not a line and column of the config file (1:5 before, a place in the
// --set value's text).
TEST(TrainSettings, AKeyMadeByASetValueBlamesThatSet) {
    TempFolder folder;
    ConfigDocument document =
        read_config_document(folder.write("t.yaml", "\n\napplication: {data: {path: x.csv}}\n"));
    apply_override(document, "train.epochs={a: 1}");
    EXPECT_EQ(error_of([&] { read_train_settings(document, {}); }),
              "--set train.epochs={a: 1}: unknown key 'application.train.epochs.a' (did you mean "
              "'train.epochs'?)");
    ConfigDocument twice =
        read_config_document(folder.write("t.yaml", "\n\napplication: {data: {path: x.csv}}\n"));
    apply_override(twice, "optimizer.lr={a: 1, a: 2}");
    EXPECT_EQ(error_of([&] { read_train_settings(twice, {}); }),
              "--set optimizer.lr={a: 1, a: 2}: key 'application.optimizer.lr.a' appears twice");
}

// train.threads past cpu_tbb's own bound (4096) is refused with it; 70000 passed the reader
// and the run died of SIGSEGV after its first epoch.
TEST(TrainSettings, ThreadsPastTheirBoundAreRefusedWithIt) {
    TempFolder folder;
    for (const std::string threads : {"4097", "70000", "-1"}) {
        ConfigDocument document =
            read_config_document(folder.write("t.yaml", "application: {data: {path: x.csv}}\n"));
        apply_override(document, "train.threads=" + threads);
        EXPECT_EQ(error_of([&] { read_train_settings(document, {}); }),
                  "--set train.threads=" + threads + ": key 'train.threads' has value '" + threads +
                      "'; expected a whole number from 0 to 4096");
    }
    folder.write("x.csv", "1,2,0\n3,4,1\n");
    ConfigDocument document =
        read_config_document(folder.write("t.yaml", "application: {data: {path: x.csv}}\n"));
    apply_override(document, "train.threads=4096");
    EXPECT_EQ(read_train_settings(document, {}).threads, 4096);
}

// A data path the file system refuses to look up is not found, with the reason, rather than
// std::filesystem's exception.
TEST(TrainSettings, ADataPathTooLongToLookUpIsNotFoundWithTheReason) {
    TempFolder folder;
    const std::string name(300, 'd');
    ConfigDocument document =
        read_config_document(folder.write("t.yaml", "application: {data: {path: " + name + "}}\n"));
    const std::string error = error_of([&] { read_train_settings(document, {}); });
    EXPECT_EQ(error.rfind("data file '" + name + "' not found; looked at: " +
                              (folder.path() / name).string() + " (File name too long)",
                          0),
              0u)
        << error;
}

TEST(TrainSettings, AMappingThatHoldsItselfIsRefusedByName) {
    // An alias can make a mapping its own value; reading it must end with a named error.
    TempFolder folder;
    const auto config = folder.write("cycle.yaml", "application: &a\n  loss: bce\n  model: *a\n");
    EXPECT_EQ(error_of([&] { read_train_settings(read_config_document(config), {}); }),
              config.string() + ":2:9: unknown key 'application.model.loss'");
    const auto deep = folder.write("deep.yaml", "application: {optimizer: {lr: {a: {b: {c: 1}}}}}\n");
    EXPECT_EQ(
        error_of([&] { read_train_settings(read_config_document(deep), {}); }),
        deep.string() + ":1:35: unknown key 'application.optimizer.lr.a' (did you mean 'optimizer.lr'?)");
    const auto twice = folder.write("twice.yaml", "application:\n  optimizer: {lr: 0.1, lr: 0.2}\n");
    EXPECT_EQ(error_of([&] { read_train_settings(read_config_document(twice), {}); }),
              twice.string() + ":2:24: key 'application.optimizer.lr' appears twice");
}

TEST(TrainSettings, ADocumentThatCannotStartIsRefusedNotLoopedOn) {
    // yaml-cpp's LoadAll never returns on these (an empty document that consumes nothing,
    // forever); the reader must refuse them at once, and still name a real second document.
    TempFolder folder;
    for (const std::string& text :
         {std::string(","), std::string("---\n,\n"), std::string("a: 1\n...\n,\n")}) {
        const auto config = folder.write("stuck.yaml", text);
        EXPECT_NE(error_of([&] {
                      read_config_document(config);
                  }).find("malformed YAML: no YAML document can start here"),
                  std::string::npos)
            << text;
    }
    const auto two = folder.write("two.yaml", "application: {}\n---\nbackend: nosuch\n");
    EXPECT_EQ(error_of([&] { read_config_document(two); }),
              two.string() + ":2:1: a second YAML document ('---'); a config is one document");
}

TEST(TrainSettings, ReadsLossAndPosWeight) {
    TempFolder folder;
    folder.write("data.csv", "1,2,0\n3,4,1\n");
    const auto defaults = folder.write("defaults.yaml", "application: {data: {path: data.csv}}\n");
    TrainSettings settings = read_train_settings(read_config_document(defaults), {});
    EXPECT_EQ(settings.loss, "bce_with_logits");
    EXPECT_EQ(settings.pos_weight, "none");
    const auto config = folder.write("train.yaml",
                                     "application:\n  data: {path: data.csv}\n  loss: bce\n"
                                     "  train: {class_weights: none, pos_weight: balanced}\n");
    settings = read_train_settings(read_config_document(config), {});
    EXPECT_EQ(settings.loss, "bce");
    EXPECT_EQ(settings.pos_weight, "balanced");
    for (const auto& [given, kept] :
         std::vector<std::pair<std::string, std::string>>{{"2.50", "2.5"},
                                                          {"3", "3"},
                                                          {"1e-3", "0.001"},
                                                          {"none", "none"},
                                                          {"~", "none"},
                                                          {"balanced", "balanced"}}) {
        ConfigDocument document = read_config_document(defaults);
        apply_override(document, "train.pos_weight=" + given);
        apply_override(document, "train.class_weights=none");
        EXPECT_EQ(read_train_settings(document, {}).pos_weight, kept) << given;
    }
    // A number keeps class_weights: balanced (the positives get the number on top).
    ConfigDocument document = read_config_document(defaults);
    apply_override(document, "train.pos_weight=2");
    EXPECT_EQ(read_train_settings(document, {}).class_weights, "balanced");

    EXPECT_FALSE(pos_weight_value("none", 100, 300).has_value());
    EXPECT_FLOAT_EQ(*pos_weight_value("balanced", 100, 300), 1.0f / 3.0f);
    EXPECT_FLOAT_EQ(*pos_weight_value("balanced", 212, 357 - 71), 212.0f / 286.0f);
    EXPECT_FALSE(pos_weight_value("balanced", 0, 10).has_value());  // one class
    EXPECT_FALSE(pos_weight_value("balanced", 10, 0).has_value());
    EXPECT_FLOAT_EQ(*pos_weight_value("0.25", 1, 1), 0.25f);
    for (const char* bad : {"0", "-1", "abc", "2x", "", "nan", "inf", "1e39", "1e-50", "Balanced"})
        EXPECT_THROW(pos_weight_value(bad, 1, 1), std::invalid_argument) << bad;
}

TEST(TrainSettings, BadLossAndPosWeightAreNamed) {
    TempFolder folder;
    folder.write("data.csv", "1,2,0\n3,4,1\n");
    const auto loss =
        folder.write("loss.yaml", "application:\n  data: {path: data.csv}\n  loss: bce_with_logit\n");
    EXPECT_EQ(error_of([&] { read_train_settings(read_config_document(loss), {}); }),
              loss.string() +
                  ":3:9: key 'loss' has value 'bce_with_logit'; expected one of bce_with_logits, bce "
                  "(did you mean 'bce_with_logits'?)");
    const auto nested =
        folder.write("nested.yaml", "application:\n  data: {path: data.csv}\n  loss: {kind: bce}\n");
    EXPECT_EQ(error_of([&] { read_train_settings(read_config_document(nested), {}); }),
              nested.string() + ":3:16: unknown key 'application.loss.kind'");
    const std::string expected =
        "; expected none, balanced, or a number > 0 (the positives' loss multiplier)";
    const auto weight =
        folder.write("weight.yaml", "application:\n  data: {path: data.csv}\n  train:\n    pos_weight: -2\n");
    EXPECT_EQ(error_of([&] { read_train_settings(read_config_document(weight), {}); }),
              weight.string() + ":4:17: key 'train.pos_weight' has value '-2'" + expected);
    const auto listed = folder.write(
        "listed.yaml", "application:\n  data: {path: data.csv}\n  train: {pos_weight: [1, 2]}\n");
    EXPECT_EQ(error_of([&] { read_train_settings(read_config_document(listed), {}); }),
              listed.string() + ":3:23: key 'train.pos_weight' has value 'a list'" + expected);
    const auto defaults = folder.write("defaults.yaml", "application: {data: {path: data.csv}}\n");
    for (const auto& [value, shown] : std::vector<std::pair<std::string, std::string>>{
             {"0", "'0'" + expected},
             {"nan", "'nan'" + expected + " (did you mean 'none'?)"},
             {"1e39", "'1e39'" + expected},
             {"balance", "'balance'" + expected + " (did you mean 'balanced'?)"},
             {"nonee", "'nonee'" + expected + " (did you mean 'none'?)"}}) {
        ConfigDocument document = read_config_document(defaults);
        apply_override(document, "train.pos_weight=" + value);
        EXPECT_EQ(error_of([&] { read_train_settings(document, {}); }),
                  "--set train.pos_weight=" + value + ": key 'train.pos_weight' has value " + shown);
    }
    EXPECT_EQ(error_of([&] {
                  ConfigDocument document = read_config_document(defaults);
                  apply_override(document, "loss.kind=bce");
              }),
              "--set 'loss.kind=bce': unknown key 'loss.kind'");
    // Balancing twice is refused where pos_weight is set.
    const auto twice = folder.write("twice.yaml",
                                    "application:\n  data: {path: data.csv}\n"
                                    "  train:\n    class_weights: balanced\n    pos_weight: balanced\n");
    EXPECT_EQ(error_of([&] { read_train_settings(read_config_document(twice), {}); }),
              twice.string() +
                  ":5:17: key 'train.pos_weight' is balanced and train.class_weights is balanced too, "
                  "which weights the positives twice; set train.class_weights to none (or give "
                  "pos_weight a number)");
}

TEST(TrainSettings, LossAndPosWeightArePartOfTheRunIdentity) {
    TrainSettings logits, bce = logits;
    bce.loss = "bce";
    TrainSettings weighted = logits;
    weighted.pos_weight = "2.5";
    const auto find = [](const TrainSettings& s, const std::string& key) {
        for (const auto& [k, v] : trajectory_settings(s))
            if (k == key) return v;
        return std::string("(absent)");
    };
    EXPECT_EQ(find(logits, "loss"), "bce_with_logits");
    EXPECT_EQ(find(bce, "loss"), "bce");
    EXPECT_EQ(find(logits, "train.pos_weight"), "none");
    EXPECT_EQ(find(weighted, "train.pos_weight"), "2.5");
    TempFolder folder;
    const auto path = folder.path() / "checkpoint.bin";
    TrainingState state;
    state.epochs_done = 1;
    write_checkpoint(path, RunIdentity{trajectory_settings(logits), 7, {3, 1}}, state);
    const ResumeBounds bounds{2, 10, 5, 4, "adam"};
    EXPECT_EQ(error_of([&] {
                  read_checkpoint(path, RunIdentity{trajectory_settings(bce), 7, {3, 1}}, bounds);
              }),
              "checkpoint '" + path.string() +
                  "' belongs to another run: loss is 'bce_with_logits' there and 'bce' here");
    EXPECT_EQ(error_of([&] {
                  read_checkpoint(path, RunIdentity{trajectory_settings(weighted), 7, {3, 1}}, bounds);
              }),
              "checkpoint '" + path.string() +
                  "' belongs to another run: train.pos_weight is 'none' there and '2.5' here");
}

class TrainCheckpoint : public ::testing::Test {
protected:
    // A run of 100 training rows in batches of 32 (4 per epoch, the last of 4 rows), 10
    // epochs, a 3-1 logistic regression (4 parameters), Adam.
    RunIdentity identity{{{"optimizer.lr", "0.01"}, {"train.seed", "1"}}, 1234, {3, 1}};
    ResumeBounds bounds{10, 100, 32, 4, "adam"};
    // Interrupted after batch 2 of epoch 5: every field consistent with the run.
    TrainingState state() const {
        TrainingState s;
        s.epochs_done = 4;
        s.batches_done = 2;
        s.epoch_start_random = RandomStream(9).state();
        s.partial_loss_sum = 1.5;
        s.partial_correct = 30;
        s.partial_seen = 64;
        s.parameters = {0.5f, -1.25f, 2.0f, 0.125f};
        s.optimizer_kind = "adam";
        s.optimizer_steps = 4 * 4 + 2;
        s.optimizer_first = {1, 2, 3, 4};
        s.optimizer_second = {5, 6, 7, 8};
        for (int64_t epoch = 1; epoch <= 4; ++epoch)
            s.history.push_back(EpochMetrics{epoch, 0.5, 0.8, 0.6, 0.75, 0.9});
        return s;
    }
    // What read_checkpoint says of a checkpoint holding state; "(no error)" when accepted.
    std::string refusal(const TrainingState& s, const ResumeBounds& b) const {
        return error_of([&] { parse_checkpoint(encode_checkpoint(identity, s), "forged.bin", identity, b); });
    }
    std::string refusal(const TrainingState& s) const { return refusal(s, bounds); }
    TempFolder folder;
    std::filesystem::path path = folder.path() / "checkpoint.bin";
};

// FNV-1a over the payload, as anyone editing a checkpoint would recompute it: the
// checksum is no protection, so the refusals below come from the checks of the fields.
uint64_t fnv1a(const std::string& bytes) {
    uint64_t hash = 1469598103934665603ULL;
    for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ULL;
    return hash;
}

TEST_F(TrainCheckpoint, RoundTripsEveryField) {
    write_checkpoint(path, identity, state());
    EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
    const TrainingState read = read_checkpoint(path, identity, bounds);
    const TrainingState expected = state();
    EXPECT_EQ(read.epochs_done, 4);
    EXPECT_EQ(read.batches_done, 2);
    EXPECT_EQ(read.epoch_start_random, expected.epoch_start_random);
    EXPECT_EQ(read.partial_loss_sum, 1.5);
    EXPECT_EQ(read.partial_correct, 30);
    EXPECT_EQ(read.partial_seen, 64);
    EXPECT_EQ(read.parameters, expected.parameters);
    EXPECT_EQ(read.optimizer_kind, "adam");
    EXPECT_EQ(read.optimizer_steps, 18);
    EXPECT_EQ(read.optimizer_first, expected.optimizer_first);
    EXPECT_EQ(read.optimizer_second, expected.optimizer_second);
    ASSERT_EQ(read.history.size(), 4u);
    EXPECT_EQ(read.history[3].epoch, 4);
    EXPECT_EQ(read.history[0].test_roc_auc, 0.9);
}

// Empty vectors (SGD's second moment, the history before the first epoch) are read without
// copying from or to a null pointer (found by fuzz_checkpoint under UBSan).
TEST_F(TrainCheckpoint, EmptyVectorsRoundTrip) {
    TrainingState s;
    s.batches_done = 1;
    s.epoch_start_random = RandomStream(3).state();
    s.partial_seen = 32;
    s.parameters = {1, 2, 3, 4};
    s.optimizer_kind = "sgd";
    s.optimizer_steps = 1;
    s.optimizer_first = {0, 0, 0, 0};
    ResumeBounds sgd = bounds;
    sgd.optimizer_kind = "sgd";
    const auto [stored, read] = decode_checkpoint(encode_checkpoint(RunIdentity{}, s), "empty.bin");
    EXPECT_TRUE(stored.settings.empty());
    EXPECT_TRUE(stored.layer_sizes.empty());
    EXPECT_TRUE(read.optimizer_second.empty());
    EXPECT_TRUE(read.history.empty());
    EXPECT_EQ(refusal(s, sgd), "(no error)");
}

TEST_F(TrainCheckpoint, CorruptTruncatedAndForeignFilesAreRefused) {
    write_checkpoint(path, identity, state());
    std::string bytes;
    {
        std::ifstream in(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto write = [&](const std::string& content) { std::ofstream(path, std::ios::binary) << content; };
    std::string flipped = bytes;
    flipped[bytes.size() / 2] ^= 0x10;
    write(flipped);
    EXPECT_EQ(error_of([&] { read_checkpoint(path, identity, bounds); }),
              "checkpoint '" + path.string() + "' is corrupt: its checksum does not match its contents");
    write(bytes.substr(0, bytes.size() - 5));
    EXPECT_NE(error_of([&] { read_checkpoint(path, identity, bounds); }).find("is corrupt"),
              std::string::npos);
    write("epoch,train_loss\n1,0.5\n");
    EXPECT_EQ(error_of([&] { read_checkpoint(path, identity, bounds); }),
              "'" + path.string() + "' is not a training checkpoint (no NNPTRAIN header)");
    std::string other_version = bytes;
    other_version[8] = 9;
    write(other_version);
    EXPECT_NE(error_of([&] { read_checkpoint(path, identity, bounds); }).find("format version 9"),
              std::string::npos);
}

TEST_F(TrainCheckpoint, PayloadSizeOtherThanTheFilesIsCorrupt) {
    std::string bytes = encode_checkpoint(identity, state());
    for (const uint64_t announced : {uint64_t{0}, uint64_t{bytes.size()}, UINT64_MAX, UINT64_MAX - 27}) {
        std::memcpy(&bytes[12], &announced, sizeof announced);
        EXPECT_EQ(
            error_of([&] { decode_checkpoint(bytes, "forged.bin"); }),
            fmt::format("checkpoint 'forged.bin' is corrupt: {} bytes, its header announces a payload of {} "
                        "bytes",
                        bytes.size(), announced));
    }
    EXPECT_NE(error_of([&] { decode_checkpoint(bytes.substr(0, 24), "short.bin"); }).find("is corrupt"),
              std::string::npos);
}

TEST_F(TrainCheckpoint, TheChecksumIsPlainFnv1aOfThePayload) {
    const std::string bytes = encode_checkpoint(identity, state());
    uint64_t stored = 0;
    std::memcpy(&stored, bytes.data() + bytes.size() - 8, sizeof stored);
    EXPECT_EQ(stored, fnv1a(bytes.substr(20, bytes.size() - 28)));
    EXPECT_EQ(refusal(state()), "(no error)");
}

TEST_F(TrainCheckpoint, PositionOutsideTheRunIsRefused) {
    const auto with = [&](int64_t epochs_done, int64_t batches_done) {
        TrainingState s = state();
        s.epochs_done = epochs_done;
        s.batches_done = batches_done;
        return refusal(s);
    };
    const std::string prefix = "checkpoint 'forged.bin' is invalid: ";
    EXPECT_EQ(
        with(4, -1),
        prefix + "batches_done is -1; expected 0 to 3 (the batches done in epoch 5 of 10, which has 4)");
    EXPECT_EQ(with(4, 4),
              prefix + "batches_done is 4; expected 0 to 3 (the batches done in epoch 5 of 10, which has 4)");
    EXPECT_NE(with(4, INT64_MIN).find(prefix + "batches_done is -9223372036854775808;"), std::string::npos);
    EXPECT_NE(with(4, INT64_MAX).find(prefix + "batches_done is 9223372036854775807;"), std::string::npos);
    EXPECT_EQ(with(11, 0), prefix + "epochs_done is 11; expected 0 to 10 (train.epochs of this run)");
    EXPECT_EQ(with(-1, 0), prefix + "epochs_done is -1; expected 0 to 10 (train.epochs of this run)");
    EXPECT_NE(with(INT64_MAX, 0).find(prefix + "epochs_done is 9223372036854775807;"), std::string::npos);
    // A finished run has no batch in progress.
    EXPECT_EQ(with(10, 2), prefix + "batches_done is 2; expected 0 (all 10 epochs of the run are done)");
    // Fewer epochs configured than the checkpoint has done.
    ResumeBounds shorter = bounds;
    shorter.epochs = 3;
    EXPECT_EQ(refusal(state(), shorter),
              prefix + "epochs_done is 4; expected 0 to 3 (train.epochs of this run)");
}

TEST_F(TrainCheckpoint, VectorsOfAnotherLengthAreRefused) {
    const std::string prefix = "checkpoint 'forged.bin' is invalid: ";
    TrainingState s = state();
    s.parameters.push_back(1.0f);
    EXPECT_EQ(refusal(s), prefix + "parameters holds 5 values; the model has 4");
    s = state();
    s.parameters.resize(1000000, 0.5f);
    EXPECT_EQ(refusal(s), prefix + "parameters holds 1000000 values; the model has 4");
    s = state();
    s.parameters.pop_back();
    EXPECT_EQ(refusal(s), prefix + "parameters holds 3 values; the model has 4");
    s = state();
    s.parameters.clear();
    EXPECT_EQ(refusal(s), prefix + "parameters holds 0 values; the model has 4");
    s = state();
    s.optimizer_first.push_back(0);
    EXPECT_EQ(refusal(s), prefix + "optimizer_first holds 5 values; Adam's mean of gradients has 4");
    s = state();
    s.optimizer_second.pop_back();
    EXPECT_EQ(refusal(s), prefix + "optimizer_second holds 3 values; Adam's mean of squared gradients has 4");
    // SGD keeps a velocity and no second moment.
    ResumeBounds sgd = bounds;
    sgd.optimizer_kind = "sgd";
    s = state();
    s.optimizer_kind = "sgd";
    EXPECT_EQ(refusal(s, sgd), prefix + "optimizer_second holds 4 values; SGD (no second moment) has 0");
    s.optimizer_second.clear();
    EXPECT_EQ(refusal(s, sgd), "(no error)");
    EXPECT_EQ(refusal(s), prefix + "optimizer_kind is 'sgd'; this run's optimizer is 'adam'");
}

TEST_F(TrainCheckpoint, ValuesThatTrainingCannotProduceAreRefused) {
    const std::string prefix = "checkpoint 'forged.bin' is invalid: ";
    TrainingState s = state();
    s.parameters[2] = NAN;
    EXPECT_EQ(refusal(s), prefix + "parameters[2] is nan; expected a finite number");
    s = state();
    s.optimizer_first[0] = INFINITY;
    EXPECT_EQ(refusal(s), prefix + "optimizer_first[0] is inf; expected a finite number");
    s = state();
    s.optimizer_second[3] = -1;
    EXPECT_EQ(refusal(s), prefix + "optimizer_second[3] is -1; expected a finite number >= 0");
    s = state();
    s.optimizer_steps = -1;
    EXPECT_EQ(refusal(s),
              prefix + "optimizer_steps is -1; expected 18 (one per batch: 4 epochs of 4 batches, then 2)");
    s.optimizer_steps = 17;
    EXPECT_NE(refusal(s).find(prefix + "optimizer_steps is 17;"), std::string::npos);
    s = state();
    s.partial_seen = 65;
    EXPECT_EQ(refusal(s), prefix + "partial_seen is 65; expected 64 (2 batches of 32 rows done in epoch 5)");
    s = state();
    s.partial_correct = 65;
    EXPECT_EQ(refusal(s), prefix + "partial_correct is 65; expected 0 to 64 (partial_seen)");
    s.partial_correct = -1;
    EXPECT_EQ(refusal(s), prefix + "partial_correct is -1; expected 0 to 64 (partial_seen)");
    for (const double bad : {-1.0, double(NAN), double(INFINITY), 1e300}) {
        s = state();
        s.partial_loss_sum = bad;
        EXPECT_NE(refusal(s).find(prefix + "partial_loss_sum is "), std::string::npos) << bad;
    }
    // At an epoch's end the partial sums are those of the whole epoch.
    s = state();
    s.batches_done = 0;
    s.optimizer_steps = 16;
    EXPECT_EQ(refusal(s), prefix + "partial_seen is 64; expected 100 (the 100 rows of epoch 4)");
    s.partial_seen = 100;
    EXPECT_EQ(refusal(s), "(no error)");
}

TEST_F(TrainCheckpoint, HistoryMustHoldOneRowPerEpochDone) {
    const std::string prefix = "checkpoint 'forged.bin' is invalid: ";
    TrainingState s = state();
    s.history.push_back(EpochMetrics{5, 0.5, 0.8, 0.6, 0.75, 0.9});
    EXPECT_EQ(refusal(s), prefix + "history holds 5 epochs; expected 4 (epochs_done)");
    s = state();
    s.history.pop_back();
    EXPECT_EQ(refusal(s), prefix + "history holds 3 epochs; expected 4 (epochs_done)");
    s = state();
    s.history[2].epoch = -7;
    EXPECT_EQ(refusal(s), prefix + "history[2].epoch is -7; expected 3");
    s = state();
    s.history[1].train_accuracy = 1.5;
    EXPECT_EQ(refusal(s), prefix + "history[1].train_accuracy is 1.5; expected a number from 0 to 1");
    s = state();
    s.history[0].test_loss = NAN;
    EXPECT_NE(refusal(s).find(prefix + "history[0].test_loss is nan;"), std::string::npos);
    s = state();
    s.history[3].test_roc_auc = -0.25;
    EXPECT_EQ(refusal(s),
              prefix +
                  "history[3].test_roc_auc is -0.25; expected a number from 0 to 1 (or nan, with one "
                  "class in the test split)");
    s.history[3].test_roc_auc = NAN;  // a test split of one class
    EXPECT_EQ(refusal(s), "(no error)");
}

TEST_F(TrainCheckpoint, ShuffleStreamStateMustBeOneTheStreamWrote) {
    const std::string prefix =
        "checkpoint 'forged.bin' is invalid: epoch_start_random is not a state of the shuffle "
        "stream";
    const std::string good = state().epoch_start_random;
    std::string all_zero;
    for (int i = 0; i < 312; ++i) all_zero += "0 ";
    all_zero += "312";
    const std::string too_far = good.substr(0, good.rfind(' ')) + " 313";
    for (const std::string& bad :
         {std::string(), std::string("not a state"), good + " ", good + " 1", " " + good, all_zero, too_far,
          good.substr(0, good.rfind(' ')), "99999999999999999999" + good.substr(good.find(' ')),
          "-1" + good.substr(good.find(' '))}) {
        TrainingState s = state();
        s.epoch_start_random = bad;
        EXPECT_NE(refusal(s).find(prefix), std::string::npos) << "'" << bad << "'";
        EXPECT_FALSE(RandomStream::is_state(bad));
        RandomStream stream(1);
        EXPECT_FALSE(stream.restore(bad));
    }
    EXPECT_TRUE(RandomStream::is_state(good));
}

TEST_F(TrainCheckpoint, AnotherRunIsRefusedWithTheDifference) {
    write_checkpoint(path, identity, state());
    RunIdentity other = identity;
    other.settings[0].second = "0.02";
    EXPECT_EQ(error_of([&] { read_checkpoint(path, other, bounds); }),
              "checkpoint '" + path.string() +
                  "' belongs to another run: optimizer.lr is '0.01' there and '0.02' here");
    other = identity;
    other.layer_sizes = {3, 8, 1};
    EXPECT_EQ(error_of([&] { read_checkpoint(path, other, bounds); }),
              "checkpoint '" + path.string() + "' belongs to another run: layer sizes 3-1 there, 3-8-1 here");
    other = identity;
    other.data_fingerprint = 99;
    EXPECT_NE(error_of([&] { read_checkpoint(path, other, bounds); }).find("trained on other data"),
              std::string::npos);
}

TEST(TrainRandomStream, StateRestoresTheSequence) {
    RandomStream a(11);
    a.next();
    const std::string saved = a.state();
    const uint64_t expected = a.next();
    RandomStream b(0);
    ASSERT_TRUE(b.restore(saved));
    EXPECT_EQ(b.next(), expected);
    EXPECT_FALSE(b.restore("not a state"));
}

}  // namespace

namespace {

TEST(TrainAgreement, DisagreementNamesEveryKeyThatDiffersWithEachRanksValue) {
    const SettingLines a = {{"train.epochs", "5"}, {"optimizer.lr", "0.01"}, {"train.seed", "42"}};
    const SettingLines b = {{"train.epochs", "5"}, {"optimizer.lr", "0.02"}, {"train.seed", "42"}};
    const SettingLines c = {{"train.epochs", "6"}, {"optimizer.lr", "0.01"}};
    EXPECT_EQ(settings_disagreement({a, a, a}), "");
    EXPECT_EQ(settings_disagreement({a, b}), "optimizer.lr (rank 0: 0.01, rank 1: 0.02)");
    // A difference on a later rank only, and a key one rank lacks.
    EXPECT_EQ(settings_disagreement({a, a, c}),
              "train.epochs (rank 0: 5, rank 1: 5, rank 2: 6); "
              "train.seed (rank 0: 42, rank 1: 42, rank 2: (none))");
    EXPECT_EQ(settings_disagreement({{{"data.path", "a\nb"}}, {{"data.path", "c"}}}),
              "data.path (rank 0: a\\x0ab, rank 1: c)");
}

// Where the runtime sends the ops is part of what ranks agree on; backend options are not.
TEST(TrainAgreement, RuntimeSettingsCoverOpsFallbackAndTheOptionsThatChangeResults) {
    ConfigDocument plain;
    plain.root = YAML::Load("backend: cpu_tbb\nbackends: {cpu_tbb: {threads: 2, grain: 4096}}\n");
    const SettingLines none = runtime_settings(plain);
    EXPECT_EQ(none, (SettingLines{{"fallback", "(none)"}, {"ops", "(none)"}}));
    // Thread counts, task sizes, logs, traces and the time estimate's bandwidth change no byte.
    ConfigDocument threads;
    threads.root = YAML::Load(
        "backend: cpu_tbb\nbackends: {cpu_tbb: {threads: 1, grain: 1024}, atlas_emu: {host_threads: 1, "
        "log_level: debug, trace: t.json, bandwidth_gbps: 100}}\n");
    EXPECT_EQ(runtime_settings(threads), none);
    ConfigDocument routed;
    routed.root = YAML::Load("backend: cpu_tbb\nops:\n  aclnnMseLoss: atlas_emu\nfallback: cpu_tbb\n");
    const SettingLines lines = runtime_settings(routed);
    EXPECT_EQ(lines, (SettingLines{{"fallback", "cpu_tbb"}, {"ops", "{aclnnMseLoss: atlas_emu}"}}));
    for (const auto& line : lines) EXPECT_EQ(line.second.find('\n'), std::string::npos) << line.first;
    // An emulated SoC, its cores, and any option of a plugin the list does not know may.
    ConfigDocument emulated;
    emulated.root = YAML::Load(
        "backend: atlas_emu\nbackends: {atlas_emu: {soc: Ascend910, vector_cores: 8, host_threads: 2}, "
        "vendor: {mode: [fast, 2]}}\n");
    EXPECT_EQ(runtime_settings(emulated), (SettingLines{{"backends.atlas_emu.soc", "Ascend910"},
                                                        {"backends.atlas_emu.vector_cores", "8"},
                                                        {"backends.vendor.mode", "[fast, 2]"},
                                                        {"fallback", "(none)"},
                                                        {"ops", "(none)"}}));
}

TEST(TrainAgreement, EffectiveSettingsCoverTheRunAndTheDataButNotThreadsOrOutputs) {
    TempFolder folder;
    TrainSettings settings;
    settings.data_path = folder.write("a.csv", "1,2,1\n3,4,0\n");
    const SettingLines base = effective_settings(settings, "cpu_tbb", 2);
    const auto value = [](const SettingLines& lines, const std::string& key) {
        for (const auto& line : lines)
            if (line.first == key) return line.second;
        return std::string("(none)");
    };
    EXPECT_EQ(value(base, "data.file_size"), "12 bytes");
    EXPECT_EQ(value(base, "backend"), "cpu_tbb");
    EXPECT_EQ(value(base, "processes"), "2");
    EXPECT_EQ(value(base, "train.epochs"), "50");
    EXPECT_TRUE(std::is_sorted(base.begin(), base.end()));
    TrainSettings other = settings;
    other.threads = 3;
    other.output_dir = "elsewhere";
    other.data_path = folder.write("b.csv", "1,2,1\n3,4,0\n");  // the same bytes
    EXPECT_EQ(effective_settings(other, "cpu_tbb", 2), base);
    other.data_path = folder.write("c.csv", "1,2,1\n3,4,1\n");
    EXPECT_NE(value(effective_settings(other, "cpu_tbb", 2), "data.file_hash"),
              value(base, "data.file_hash"));
    EXPECT_NE(effective_settings(settings, "atlas_emu", 2), base);
    EXPECT_NE(effective_settings(settings, "cpu_tbb", 3), base);
    // The checkpoint resumed from, by its bytes: none, one, a copy, another.
    EXPECT_EQ(value(base, "resume.checkpoint"), "none");
    const auto checkpoint = folder.write("checkpoint.bin", "NNPTRAIN state");
    const SettingLines resumed = effective_settings(settings, "cpu_tbb", 2, checkpoint);
    EXPECT_EQ(value(resumed, "resume.checkpoint").rfind("14 bytes, fnv1a ", 0), 0u)
        << value(resumed, "resume.checkpoint");
    EXPECT_EQ(effective_settings(settings, "cpu_tbb", 2, folder.write("copy.bin", "NNPTRAIN state")),
              resumed);
    EXPECT_NE(effective_settings(settings, "cpu_tbb", 2, folder.write("later.bin", "NNPTRAIN statf")),
              resumed);
    for (const auto& change : std::vector<std::function<void(TrainSettings&)>>{
             [](TrainSettings& s) { s.epochs = 7; }, [](TrainSettings& s) { s.batch_size = 8; },
             [](TrainSettings& s) { s.learning_rate = 0.5; }, [](TrainSettings& s) { s.seed = 1; },
             [](TrainSettings& s) { s.checkpoint_every = 3; }, [](TrainSettings& s) { s.loss = "bce"; }}) {
        TrainSettings changed = settings;
        change(changed);
        EXPECT_NE(effective_settings(changed, "cpu_tbb", 2), base);
    }
}

}  // namespace

namespace {

TEST(TrainReport, RocPointsRunFromTheOriginToOneOnePerDistinctScore) {
    const float scores[] = {0.9f, 0.8f, 0.8f, 0.3f, 0.1f};
    const float labels[] = {1, 1, 0, 1, 0};
    const std::vector<std::pair<double, double>> expected = {
        {0.0, 0.0}, {0.0, 1.0 / 3}, {0.5, 1.0}, {0.5, 1.0}, {1.0, 1.0}};
    // 0.8 is tied between a positive and a negative: one diagonal step, not two.
    const auto points = roc_points(scores, labels, 5);
    ASSERT_EQ(points.size(), 5u);
    EXPECT_EQ(points[1], expected[1]);
    EXPECT_EQ(points[2], (std::pair<double, double>{0.5, 2.0 / 3}));
    EXPECT_EQ(points[3], (std::pair<double, double>{0.5, 1.0}));
    EXPECT_EQ(points.back(), expected.back());
    const std::string svg = roc_curve_svg(scores, labels, 5, 0.83, "model <x> on data");
    EXPECT_NE(svg.find("AUC 0.8300"), std::string::npos);
    EXPECT_NE(svg.find("model &lt;x&gt; on data"), std::string::npos);
}

// The shipped training configs name their data by a path that resolves beside them, in the
// repository and in the build tree alike, with no fallback search.
TEST(TrainSettings, ShippedConfigsFindTheirDataInTheRepositoryAndTheBuildTree) {
    for (const std::string folder : {NNPLUG_SOURCE_CONFIGS, NNPLUG_BUILD_CONFIGS})
        for (const std::string name : {"train_cpu.yaml", "train_atlas_910b.yaml"}) {
            const auto config = std::filesystem::path(folder) / name;
            const TrainSettings settings = read_train_settings(read_config_document(config), {});
            EXPECT_TRUE(std::filesystem::is_regular_file(settings.data_path)) << config;
            EXPECT_EQ(settings.data_path.filename(), "breast_cancer_wisconsin.csv");
            EXPECT_FALSE(names_output_dir(read_config_document(config))) << config;
        }
}

TEST(TrainSettings, DefaultOutputFolderIsNamedAfterTheConfigAndBackend) {
    TempFolder folder;
    const ConfigDocument document = read_config_document(folder.write("my_run.yaml", "backend: cpu_tbb\n"));
    EXPECT_EQ(default_output_dir(document, "atlas_emu"),
              std::filesystem::path("train_output/my_run-atlas_emu"));
}

}  // namespace

namespace {

// default_threads reads the calling thread's CPU affinity: run it on a thread bound to one CPU.
TEST(TrainThreads, DefaultThreadsAreTheShareOfTheCoresOrTheBoundOnes) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    EXPECT_EQ(default_threads(1), cores);
    EXPECT_EQ(default_threads(2), std::max(1, cores / 2));
    EXPECT_EQ(default_threads(1000), 1);
    int bound = 0;
    std::thread([&] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        if (sched_setaffinity(0, sizeof(one), &one) == 0) bound = default_threads(2);
    }).join();
    if (cores > 1) {
        EXPECT_EQ(bound, 1);
    }
}

}  // namespace

namespace {

// The data step: every sample's weight follows its label, in training and in the test
// split; bce folds pos_weight into the positives' weight, bce_with_logits leaves it to the ops.
TEST(TrainData, PreparedDataWeighsEverySampleByItsLabel) {
    TrainSettings settings;
    settings.data_path = NNPLUG_SHIPPED_DATA;
    settings.pos_weight = "2";
    for (const LossKind kind : {LossKind::kBceWithLogits, LossKind::kBce}) {
        const TrainingData data = prepare_data(settings, kind);
        const float positive = data.class_weights.second * (kind == LossKind::kBce ? 2.0f : 1.0f);
        EXPECT_EQ(data.label_weights[0], data.class_weights.first);
        EXPECT_EQ(data.label_weights[1], positive);
        ASSERT_EQ(data.test_weights.size(), data.test_rows());
        int64_t positives = 0;
        for (int64_t i = 0; i < data.test_rows(); ++i) {
            const bool label = data.split.test.labels[i] == 1.0f;
            positives += label;
            EXPECT_EQ(data.test_weights[i], label ? positive : data.class_weights.first) << i;
        }
        EXPECT_GT(positives, 0);
        EXPECT_EQ(data.train_rows() + data.test_rows(), 569);
        EXPECT_EQ(data.features(), 30);
        int64_t train_positives = 0;
        for (int64_t i = 0; i < data.train_rows(); ++i) train_positives += data.train_labels[i];
        EXPECT_EQ(train_positives, data.split.train.positives());
    }
}

}  // namespace
