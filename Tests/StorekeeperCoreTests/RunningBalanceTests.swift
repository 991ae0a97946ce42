import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A user's balances are kept as data (`user_balances`, migration 0023) instead of summed from
/// the ledger on every change: over random histories, written by many statements at once,
/// what the entitlements view and the events answer still equals a full recomputation from the
/// ledger, and the ledger refuses the edits that would make the two drift.
@Suite(.database) struct RunningBalanceTests {
  /// A seeded generator, so a failure can be replayed.
  struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  static let users = ["ana", "bo", "jose\u{301}", "jos\u{E9}", "chen"]
  static let assets = ["gold", "gems", "tickets"]

  /// One multi-row INSERT of random rows: refunds (negative), sandbox and production alike;
  /// for `user` alone when given, as a settlement writes, else for several users, their rows in
  /// one order of users, as a writer for several users locks them (`EventOutbox.lock`).
  static func randomStatement(_ random: inout Seeded, user only: String? = nil) -> PostgresQuery {
    var rows: [(user: String, asset: String, amount: Int64, environment: String)] = []
    for _ in 0..<Int.random(in: 1...6, using: &random) {
      let refund = Int.random(in: 0..<4, using: &random) == 0
      rows.append(
        (
          only ?? users.randomElement(using: &random) ?? "ana",
          assets.randomElement(using: &random) ?? "gold",
          Int64.random(in: 1...500, using: &random) * (refund ? -1 : 1),
          Bool.random(using: &random) ? "Sandbox" : "Production"
        ))
    }
    rows.sort { UserId.key($0.user) < UserId.key($1.user) }
    var query: PostgresQuery =
      "INSERT INTO ledger (user_id, asset, amount, kind, environment) VALUES "
    for (index, row) in rows.enumerated() {
      if index > 0 { query.append(", ") }
      query.append(
        "(\(row.user), \(row.asset), \(row.amount), \(row.amount < 0 ? "refund" : "grant"), \(row.environment))"
      )
    }
    return query
  }

  /// `user -> asset -> (total, sandbox, lots)`: the total summed from every ledger row (the
  /// truth), the sandbox part as what the sandbox's lots hold (a debit takes from whichever
  /// lots it reaches, so a row's own environment does not say), and what all lots hold.
  static func recomputed(_ h: DomainHarness) async throws -> [String: [String: [Int64]]] {
    let rows = try await h.database.query(
      """
      SELECT l.user_id, l.asset, sum(l.amount)::bigint AS total,
             (SELECT coalesce(sum(remaining), 0) FROM ledger_lots o WHERE o.user_id = l.user_id
              AND o.asset = l.asset AND o.environment = 'Sandbox')::bigint AS sandbox,
             (SELECT coalesce(sum(remaining), 0) FROM ledger_lots o WHERE o.user_id = l.user_id
              AND o.asset = l.asset)::bigint AS lots
      FROM ledger l GROUP BY l.user_id, l.asset
      """)
    var sums: [String: [String: [Int64]]] = [:]
    for row in rows {
      let user: String = try row.decode("user_id")
      sums[UserId.key(user), default: [:]][try row.decode("asset")] = [
        try row.decode("total"), try row.decode("sandbox"), try row.decode("lots"),
      ]
    }
    return sums
  }

  @Test func balancesOverRandomHistoriesEqualAFullRecomputation() async throws {
    try await DomainHarness.with { h in
      // Eight writers at once, so the running sums meet every interleaving of statements.
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<8 {
          group.addTask {
            var random = Seeded(state: UInt64(writer) * 7919 + 1)
            for _ in 0..<40 {
              // A transaction of several statements writes for one user, as every writer of
              // the ledger does; one statement may write for many (its locks are taken in key
              // order).
              let user = Self.users.randomElement(using: &random)
              let statements = Int.random(in: 1...3, using: &random)
              try await h.database.withTransaction { tx in
                for _ in 0..<statements {
                  try await tx.execute(
                    Self.randomStatement(&random, user: statements == 1 ? nil : user))
                }
              }
            }
          }
        }
        try await group.waitForAll()
      }
      let truth = try await Self.recomputed(h)
      #expect(truth.count == Self.users.count)
      for user in Self.users {
        let view = try await h.entitlements.view(userId: user)
        let expected = truth[UserId.key(user)] ?? [:]
        #expect(view.balances == expected.mapValues { $0[0] }, "\(user)")
        #expect(
          view.sandboxBalances == expected.mapValues { $0[1] }.filter { $0.value != 0 },
          "\(user)")
        // The lots hold the balance when it is positive, nothing when it is not; the sandbox's
        // part of it is never more.
        for (asset, sums) in expected {
          #expect(sums[2] == max(sums[0], 0), "\(user) \(asset)")
          #expect(sums[1] >= 0 && sums[1] <= sums[2], "\(user) \(asset)")
        }
        // The state an event records is the same sum.
        _ = try await h.database.query(
          "SELECT storekeeper_append_events(\(user)::text, '[]'::jsonb, now(), NULL)")
        let recorded = try await h.database.query(
          """
          SELECT (user_state->'balances')::text AS balances FROM events
          WHERE user_id = \(user) ORDER BY sequence DESC LIMIT 1
          """)
        let balances: String = try #require(recorded.first).decode("balances")
        #expect(
          try JSONDecoder().decode([String: Int64].self, from: Data(balances.utf8))
            == expected.mapValues { $0[0] }, "\(user)")
      }
    }
  }

  @Test func theLedgerIsAppendOnly() async throws {
    try await DomainHarness.with { h in
      try await h.database.execute(
        "INSERT INTO ledger (user_id, asset, amount, kind) VALUES ('dana', 'gold', 5, 'grant')")
      for edit: PostgresQuery in [
        "UPDATE ledger SET amount = 500 WHERE user_id = 'dana'",
        "DELETE FROM ledger WHERE user_id = 'dana'", "TRUNCATE ledger",
      ] {
        await #expect(throws: PostgresError.self) { try await h.database.execute(edit) }
      }
      #expect(try await h.entitlements.view(userId: "dana").balances == ["gold": 5])
    }
  }
}
