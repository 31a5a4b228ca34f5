// SPDX-License-Identifier: Apache-2.0
// The memory tier's table: lookups take no lock and write no shared memory, so threads that
// hit at once do not slow each other down; inserts are serialised by the caller's mutex.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace wyjit::detail {

/// An insert-only hash table of immutable `Node`s (each with a `key` member compared with ==),
/// open addressing with linear probing. find() is lock-free and may run during publish();
/// publish() must be serialised by the caller. Nodes and old slot arrays live until the
/// table is destroyed, so a pointer find() returned stays valid, and a reader that still
/// scans a replaced array finds what was there (a miss sends it to the locked slow path).
template <typename Node, typename Hash>
class MemoryTable {
 public:
  MemoryTable() { install(kInitialCapacity); }
  MemoryTable(const MemoryTable&) = delete;
  MemoryTable& operator=(const MemoryTable&) = delete;

  /// The node for `key`, or nullptr.
  template <typename Key>
  const Node* find(const Key& key) const noexcept {
    const Slots* slots = current_.load(std::memory_order_acquire);
    std::size_t i = Hash{}(key)&slots->mask;
    for (std::size_t probes = 0; probes <= slots->mask; ++probes, i = (i + 1) & slots->mask) {
      const Node* node = slots->at[i].load(std::memory_order_acquire);
      if (node == nullptr) return nullptr;
      if (node->key == key) return node;
    }
    return nullptr;
  }

  /// Adds `node`, whose key must not be in the table yet. Caller holds the writers' mutex.
  const Node* publish(std::unique_ptr<Node> node) {
    Slots* slots = current_.load(std::memory_order_relaxed);
    // NOTE: at most half full, so probes stay short and a miss always meets an empty slot.
    if (2 * (count_ + 1) > slots->mask + 1) slots = install(2 * (slots->mask + 1));
    const Node* added = node.get();
    nodes_.push_back(std::move(node));
    place(*slots, added);
    ++count_;
    return added;
  }

  std::size_t size() const noexcept { return count_; }

  /// Every node, in insertion order (caller holds the writers' mutex, or no writer runs).
  const std::vector<std::unique_ptr<Node>>& nodes() const noexcept { return nodes_; }

 private:
  static constexpr std::size_t kInitialCapacity = 64;

  struct Slots {
    std::size_t mask = 0;
    std::unique_ptr<std::atomic<const Node*>[]> at;
  };

  static void place(Slots& slots, const Node* node) {
    std::size_t i = Hash{}(node->key) & slots.mask;
    while (slots.at[i].load(std::memory_order_relaxed) != nullptr) i = (i + 1) & slots.mask;
    // NOTE: release: a reader that sees the pointer sees the fully built node.
    slots.at[i].store(node, std::memory_order_release);
  }

  /// A fresh array of `capacity` (a power of two) slots holding every node, made current.
  Slots* install(std::size_t capacity) {
    auto slots = std::make_unique<Slots>();
    slots->mask = capacity - 1;
    slots->at = std::make_unique<std::atomic<const Node*>[]>(capacity);  // all nullptr
    for (const auto& node : nodes_) place(*slots, node.get());
    Slots* raw = slots.get();
    arrays_.push_back(std::move(slots));
    current_.store(raw, std::memory_order_release);
    return raw;
  }

  std::atomic<Slots*> current_{nullptr};
  std::vector<std::unique_ptr<Slots>> arrays_;  // every array ever installed
  std::vector<std::unique_ptr<Node>> nodes_;    // every node ever published
  std::size_t count_ = 0;
};

}  // namespace wyjit::detail
