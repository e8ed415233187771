//===- InlineListTest.cpp - m2n::InlineList and Dims ----------------------===//

#include "m2n/Artifact/Program.h"
#include "m2n/Base/InlineList.h"
#include "m2n/Base/Layout.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

// Random pushes, pops, writes and copies across the inline/heap boundary,
// checked against a std::vector doing the same.
TEST(InlineListTest, MatchesAVectorAcrossTheInlineBoundary) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  m2n::InlineList<int64_t, 3> list;
  std::vector<int64_t> expected;
  for (int step = 0; step < 20000; ++step) {
    switch (random() % 5) {
    case 0:
    case 1: {
      int64_t value = static_cast<int64_t>(random());
      list.push_back(value);
      expected.push_back(value);
      break;
    }
    case 2:
      if (!expected.empty()) {
        list.pop_back();
        expected.pop_back();
      }
      break;
    case 3:
      if (!expected.empty()) {
        size_t at = random() % expected.size();
        list[at] = expected[at] = static_cast<int64_t>(random());
      }
      break;
    case 4: {
      m2n::InlineList<int64_t, 3> copy = list;
      list = copy;
      break;
    }
    }
    ASSERT_EQ(list.size(), expected.size());
    ASSERT_EQ(list.vec(), expected);
  }
}

TEST(InlineListTest, AssignResizeAndCompare) {
  m2n::InlineList<int64_t, 2> list{1, 2, 3, 4};
  EXPECT_EQ(list.size(), 4u);
  EXPECT_EQ(list.back(), 4);
  list.resize(1);
  EXPECT_EQ(list.vec(), std::vector<int64_t>{1});
  list.resize(3, 7);
  EXPECT_EQ(list.vec(), (std::vector<int64_t>{1, 7, 7}));
  list.assign(2, 5);
  EXPECT_EQ(list, (m2n::InlineList<int64_t, 2>{5, 5}));
  EXPECT_NE(list, (m2n::InlineList<int64_t, 2>{5}));
  list.clear();
  EXPECT_TRUE(list.empty());
}

// A value written while the list was on the heap survives the way back.
TEST(InlineListTest, DimsKeepWritesAfterShrinkingToInline) {
  m2n::Dims dims(7, 1);
  dims[2] = 42;
  dims.pop_back();
  EXPECT_EQ(dims.size(), 6u);
  EXPECT_EQ(dims[2], 42);
  EXPECT_EQ(m2n::Dims(3, 9).vec(), (std::vector<int64_t>{9, 9, 9}));
}

TEST(InlineListTest, MovementWaitsAndRepeats) {
  m2n::Movement movement;
  movement.waits.push_back({{1, 0}, 2});
  movement.waits.push_back({{2, 1}, 3});
  movement.repeats = std::vector<m2n::Repeat>{{4, 16, 32, -1}, {2, 64, 128, -1},
                                              {3, 1, 1, -1}};
  EXPECT_EQ(movement.instances(), 24);
  m2n::Movement copy = movement;
  EXPECT_EQ(copy.waits.size(), 2u);
  EXPECT_EQ(copy.waits[1].value, 3u);
  EXPECT_TRUE(copy.repeats == movement.repeats);
}

} // namespace
