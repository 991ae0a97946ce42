import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// The feed's cursor never skips an event whose transaction commits after a read that came
/// past its position.
@Suite(.database) struct EventFeedTests {
  /// Reads until `done` holds for the page (other tests' transactions on the same server hold
  /// the snapshot's xmin back for a moment, longer on a loaded machine), at most 60 s.
  private static func read(
    _ feed: EventFeed, after: EventFeedCursor?, until done: (EventFeed.Page) -> Bool
  ) async throws -> EventFeed.Page {
    let deadline = Date().addingTimeInterval(60)
    while true {
      let page = try await feed.read(.init(after: after, limit: 50))
      if done(page) || Date() > deadline { return page }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  /// Whether the other task signalled before its stream finished (it finishes the stream
  /// whatever fails, so this never waits forever); when not, awaiting the task shows why.
  private static func signalled(_ stream: AsyncStream<Void>) async -> Bool {
    for await _ in stream { return true }
    return false
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
      guard await Self.signalled(inserted) else {
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

  @Test func pagesFollowTheXidsAsNumbersAcrossAPowerOfTen() async throws {
    try await DomainHarness.with { h in
      let outbox = h.orders.outbox
      for user in ["ninety-eight", "ninety-nine", "hundred"] {
        try await outbox.append([EventDraft(.adminAdjustment, [:])], for: user, on: h.database)
      }
      // Transactions long ended, whose ids cross from two digits to three.
      try await h.database.execute(
        """
        UPDATE events SET xid = (CASE user_id WHEN 'ninety-eight' THEN '98'
                                              WHEN 'ninety-nine' THEN '99' ELSE '100' END)::xid8
        """)
      let feed = EventFeed(database: h.database)
      var cursor: EventFeedCursor?
      var seen: [String] = []
      for _ in 0..<4 {
        let page = try await feed.read(.init(after: cursor, limit: 1))
        seen += page.events.map(\.userId)
        cursor = page.next
      }
      #expect(seen == ["ninety-eight", "ninety-nine", "hundred"])
      let whole = try await feed.read(.init(limit: 50))
      #expect(whole.events.map(\.userId) == ["ninety-eight", "ninety-nine", "hundred"])
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
      // Before the two kinds, both feeds handed out `v1` cursors: still read, as they were.
      #expect(EventFeedCursor(text: "djE6MTox") == .legacy(xid: 1, position: 1))
      #expect(EventFeedCursor(xid: 1, position: 1).text == "djI6MTox")
    }
  }

  /// A transaction that took its xid first may append a user's event after another committed
  /// one: read by user, the events still come in sequence order, page after page, and a cursor
  /// from the whole feed goes on from there.
  @Test func aUsersEventsComeInSequenceOrderWhateverTheirTransactionsXids() async throws {
    try await DomainHarness.with { h in
      let outbox = h.orders.outbox
      let feed = EventFeed(database: h.database)
      let user = "sequence-\(UUID().uuidString)"
      func adjust(_ note: String, on executor: any PostgresExecutor) async throws {
        try await outbox.append(
          [EventDraft(.adminAdjustment, ["note": .string(note)])], for: user, on: executor)
      }
      let (started, startedSignal) = AsyncStream<Void>.makeStream()
      let (proceed, proceedSignal) = AsyncStream<Void>.makeStream()
      let older = Task {
        defer { startedSignal.finish() }
        try await h.database.withTransaction { tx in
          // Its xid now, before the other transaction exists; its event after that one's.
          _ = try await tx.query("SELECT pg_current_xact_id()::text AS xid")
          startedSignal.yield()
          for await _ in proceed { break }
          try await adjust("second", on: tx)
        }
      }
      defer { proceedSignal.finish() }
      guard await Self.signalled(started) else {
        try await older.value
        return
      }
      try await adjust("first", on: h.database)
      proceedSignal.yield()
      try await older.value

      let whole = try await Self.read(feed, after: nil) { page in
        page.events.filter { $0.userId == user }.count == 2
      }
      let mine = whole.events.filter { $0.userId == user }
      // The whole feed reads in the order transactions began: the precondition of this test.
      #expect(mine.map(\.sequence) == [2, 1])

      let all = try await feed.read(.init(userId: user, limit: 50))
      #expect(all.events.map(\.sequence) == [1, 2])
      #expect(
        all.events.map { $0.data } == [
          .object(["note": .string("first")]), .object(["note": .string("second")]),
        ])
      let first = try await feed.read(.init(userId: user, limit: 1))
      #expect(first.events.map(\.sequence) == [1] && first.hasMore)
      let second = try await feed.read(.init(userId: user, after: first.next, limit: 1))
      #expect(second.events.map(\.sequence) == [2] && !second.hasMore)
      let after = try await feed.read(.init(userId: user, after: second.next, limit: 1))
      #expect(after.events.isEmpty && after.next == second.next)
      // A cursor of the whole feed, at this user's sequence 2 there, reads on in the whole
      // feed's order: sequence 1 comes after it there, so it comes here (taken as a sequence,
      // "after 2" would have passed it for good), with a cursor of the same kind.
      let fromWhole = try await feed.read(.init(userId: user, after: mine[0].cursor, limit: 50))
      #expect(fromWhole.events.map(\.sequence) == [1])
      #expect(fromWhole.next == mine[1].cursor)
      // One from before both: both, in the whole feed's order.
      let before = try await feed.read(
        .init(userId: user, after: .init(xid: 1, position: 0), limit: 50))
      #expect(before.events.map(\.sequence) == [2, 1])
      // A cursor handed out before the two kinds is read as it was: by the sequence of the
      // user's event it names, else in the whole feed's order, then by sequence.
      guard case .feed(let xid, let position) = mine[0].cursor else {
        Issue.record("a whole-feed cursor expected")
        return
      }
      let legacy = try await feed.read(
        .init(userId: user, after: .legacy(xid: xid, position: position), limit: 50))
      #expect(legacy.events.isEmpty)
      let legacyBefore = try await feed.read(
        .init(userId: user, after: .legacy(xid: 1, position: 0), limit: 50))
      #expect(legacyBefore.events.map(\.sequence) == [1, 2])
      #expect(legacyBefore.next == .user(key: EventFeedCursor.key(of: user), sequence: 2))
      // A user's cursor is read on in that user's feed only.
      await #expect(throws: EventFeed.CursorOfAnotherFeed.self) {
        try await feed.read(.init(after: first.next, limit: 50))
      }
      await #expect(throws: EventFeed.CursorOfAnotherFeed.self) {
        try await feed.read(.init(userId: user + "-other", after: first.next, limit: 50))
      }
    }
  }

  /// A whole-feed reader switching to one user's feed with its cursor: an event of that user
  /// the whole feed still held back (its transaction began after another still running) comes
  /// once that one ends, although a later sequence of the user's was read before it.
  @Test func aWholeFeedCursorReadForOneUserSkipsNothingTheFeedHeldBack() async throws {
    try await DomainHarness.with { h in
      let outbox = h.orders.outbox
      let feed = EventFeed(database: h.database)
      let user = "switch-\(UUID().uuidString)"
      func adjust(_ note: String, on executor: any PostgresExecutor) async throws {
        try await outbox.append(
          [EventDraft(.adminAdjustment, ["note": .string(note)])], for: user, on: executor)
      }
      // `later` takes its xid first; `holder` begins after it and stays open; `earlier`
      // appends sequence 1 and commits; `later` appends sequence 2 and commits. The whole
      // feed shows 2 (its xid is below the holder's) and holds 1 back.
      let (laterStarted, laterStartedSignal) = AsyncStream<Void>.makeStream()
      let (laterGo, laterGoSignal) = AsyncStream<Void>.makeStream()
      let later = Task {
        defer { laterStartedSignal.finish() }
        try await h.database.withTransaction { tx in
          _ = try await tx.query("SELECT pg_current_xact_id()::text AS xid")
          laterStartedSignal.yield()
          for await _ in laterGo { break }
          try await adjust("second", on: tx)
        }
      }
      defer { laterGoSignal.finish() }
      guard await Self.signalled(laterStarted) else {
        try await later.value
        return
      }
      let (holding, holdingSignal) = AsyncStream<Void>.makeStream()
      let (release, releaseSignal) = AsyncStream<Void>.makeStream()
      let holder = Task {
        defer { holdingSignal.finish() }
        try await h.database.withTransaction { tx in
          _ = try await tx.query("SELECT pg_current_xact_id()::text AS xid")
          holdingSignal.yield()
          for await _ in release { break }
        }
      }
      defer { releaseSignal.finish() }
      guard await Self.signalled(holding) else {
        try await holder.value
        return
      }
      try await adjust("first", on: h.database)
      laterGoSignal.yield()
      try await later.value

      let whole = try await Self.read(feed, after: nil) { page in
        page.events.contains { $0.userId == user }
      }
      #expect(whole.events.filter { $0.userId == user }.map(\.sequence) == [2])
      let held = try await feed.read(.init(userId: user, after: whole.next, limit: 50))
      #expect(held.events.isEmpty)
      releaseSignal.finish()
      try await holder.value
      let after = try await Self.read(feed, after: nil) { page in
        page.events.filter { $0.userId == user }.count == 2
      }
      #expect(after.events.filter { $0.userId == user }.count == 2)
      let switched = try await feed.read(.init(userId: user, after: whole.next, limit: 50))
      #expect(switched.events.map(\.sequence) == [1])
    }
  }

  /// A chart rollup pass can run for minutes at a large store and writes no events: the whole
  /// feed goes on showing what commits meanwhile (it waited for the pass's commit before).
  @Test func aLongChartRollupPassDoesNotHoldTheFeedBack() async throws {
    try await DomainHarness.with { h in
      let feed = EventFeed(database: h.database)
      // The pass waits on this lock (its DELETE needs ROW EXCLUSIVE) after it took its
      // transaction id and named itself. SHARE takes no id (ACCESS EXCLUSIVE would, for the
      // standby's sake), so the holder holds nothing of the feed back.
      let (locked, lockedSignal) = AsyncStream<Void>.makeStream()
      let (release, releaseSignal) = AsyncStream<Void>.makeStream()
      let holder = Task {
        defer { lockedSignal.finish() }
        try await h.database.withTransaction { tx in
          try await tx.execute("LOCK TABLE chart_unit_hourly IN SHARE MODE")
          lockedSignal.yield()
          for await _ in release { break }
        }
      }
      defer { releaseSignal.finish() }
      guard await Self.signalled(locked) else {
        try await holder.value
        return
      }
      let pass = Task { try await ChartRollup(database: h.database).rebuild() }
      let deadline = Date().addingTimeInterval(60)
      var named = 0
      while named == 0 && Date() < deadline {
        try await Task.sleep(for: .milliseconds(20))
        named =
          try await h.database.query(
            "SELECT count(*)::int AS n FROM feed_exempt_transactions"
          ).first?.decode("n") ?? 0
      }
      #expect(named == 1)

      try await h.orders.outbox.append(
        [EventDraft(.adminAdjustment, ["note": .string("during the pass")])], for: "during",
        on: h.database)
      let page = try await Self.read(feed, after: nil) { page in
        page.events.contains { $0.userId == "during" }
      }
      #expect(page.events.map(\.userId) == ["during"])

      releaseSignal.finish()
      try await holder.value
      let built = try await pass.value
      #expect(built.generation == 1)
      let left = try await h.database.query(
        "SELECT count(*)::int AS n FROM feed_exempt_transactions"
      ).first?.decode("n", as: Int.self)
      #expect(left == 0)
    }
  }
}
