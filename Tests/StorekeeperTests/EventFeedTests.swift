import Foundation
import Postgres
import Testing

@testable import Storekeeper

/// The feed's cursor never skips an event whose transaction commits after a read that came
/// past its position.
@Suite struct EventFeedTests {
  /// Reads until `done` holds for the page (other tests' transactions on the same server hold
  /// the snapshot's xmin back for a moment), at most 15 s.
  private static func read(
    _ feed: EventFeed, after: EventFeedCursor?, until done: (EventFeed.Page) -> Bool
  ) async throws -> EventFeed.Page {
    let deadline = Date().addingTimeInterval(15)
    while true {
      let page = try await feed.read(.init(after: after, limit: 50))
      if done(page) || Date() > deadline { return page }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  @Test func aLateCommitIsReadAfterTheCursorNotSkipped() async throws {
    try await DomainHarness.with { h in
      let outbox = h.orders.outbox
      let feed = EventFeed(database: h.database)
      func adjust(_ user: String, on executor: any PostgresExecutor) async throws {
        try await outbox.append(
          [EventDraft(.adminAdjustment, ["note": .string(user)])], for: user, on: executor)
      }
      try await adjust("first", on: h.database)

      let (inserted, insertedSignal) = AsyncStream<Void>.makeStream()
      let (release, releaseSignal) = AsyncStream<Void>.makeStream()
      let late = Task {
        // Whatever fails, the test never waits for a signal that cannot come.
        defer { insertedSignal.finish() }
        try await h.database.withTransaction { tx in
          try await adjust("late", on: tx)
          insertedSignal.yield()
          for await _ in release { break }
        }
      }
      defer { releaseSignal.finish() }
      var lateInserted = false
      for await _ in inserted {
        lateInserted = true
        break
      }
      guard lateInserted else {
        try await late.value
        return
      }
      // Inserted after "late" (a larger position) and committed before it.
      try await adjust("early", on: h.database)

      let before = try await Self.read(feed, after: nil) { page in
        page.events.contains { $0.userId == "first" }
      }
      // "early" has committed, yet it is held back while "late", begun before it, may still
      // commit: a reader that saw "early" now would page past "late".
      #expect(before.events.map(\.userId) == ["first"])

      releaseSignal.finish()
      try await late.value
      let byPosition = try await h.database.query(
        "SELECT user_id FROM events ORDER BY position"
      ).map { try $0.decode("user_id", as: String.self) }
      #expect(byPosition == ["first", "late", "early"])
      let after = try await Self.read(feed, after: before.next) { page in
        page.events.count >= 2
      }
      #expect(after.events.map(\.userId) == ["late", "early"])
      #expect(after.events.map(\.sequence) == [1, 1])
      let rest = try await feed.read(.init(after: after.next, limit: 50))
      #expect(rest.events.isEmpty && rest.next == after.next && !rest.hasMore)
    }
  }

  @Test func pagesFollowEachOtherAndFiltersNarrowThem() async throws {
    try await DomainHarness.with { h in
      let outbox = h.orders.outbox
      for index in 0..<5 {
        try await outbox.append(
          [EventDraft(.adminAdjustment, ["n": .number(String(index))])],
          for: index % 2 == 0 ? "even" : "odd", on: h.database)
      }
      let feed = EventFeed(database: h.database)
      _ = try await Self.read(feed, after: nil) { $0.events.count == 5 }
      var cursor: EventFeedCursor?
      var seen: [String] = []
      var more: [Bool] = []
      for _ in 0..<3 {
        let page = try await feed.read(.init(after: cursor, limit: 2))
        seen += page.events.map(\.userId)
        more.append(page.hasMore)
        cursor = page.next
      }
      #expect(seen == ["even", "odd", "even", "odd", "even"])
      #expect(more == [true, true, false])
      let odd = try await feed.read(.init(userId: "odd", limit: 50))
      #expect(odd.events.map(\.sequence) == [1, 2])
      let typed = try await feed.read(.init(type: .balanceChanged, limit: 50))
      #expect(typed.events.isEmpty)
      #expect(EventFeedCursor(text: cursor?.text ?? "") == cursor)
      #expect(EventFeedCursor(text: "not a cursor") == nil)
      #expect(EventFeedCursor(text: "djE6MTox") == EventFeedCursor(xid: 1, position: 1))
    }
  }
}
