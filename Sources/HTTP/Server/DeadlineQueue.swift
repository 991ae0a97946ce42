/// A min-heap of (deadline, fd, generation). Entries are never removed early: a connection
/// whose deadline moved is checked when its entry comes due (see `EventLoop+Timers`), so
/// pushing the deadline further out — every keep-alive request does — costs nothing.
struct DeadlineQueue {
  struct Entry {
    var at: UInt64
    var fd: Int32
    var generation: UInt32
  }

  private var heap: [Entry] = []

  var isEmpty: Bool { heap.isEmpty }
  var next: Entry? { heap.first }

  mutating func push(_ entry: Entry) {
    heap.append(entry)
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].at < heap[parent].at else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  mutating func pop() -> Entry? {
    guard !heap.isEmpty else { return nil }
    heap.swapAt(0, heap.count - 1)
    let top = heap.removeLast()
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count && heap[left].at < heap[smallest].at { smallest = left }
      if right < heap.count && heap[right].at < heap[smallest].at { smallest = right }
      if smallest == parent { break }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
    return top
  }
}
