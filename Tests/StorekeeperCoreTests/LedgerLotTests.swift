import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// The lots (migration 0035) stay what they claim over random histories written by many
/// writers at once: credits, negative adjustments and spends through `WalletService`. What is
/// left of a user's credits of an asset is their balance when that is positive and nothing
/// otherwise, no debit is attributed more than it took, and no spend takes a balance below zero.
@Suite(.database) struct LedgerLotTests {
  static let users = ["ana", "bo", "chen"]
  static let assets = ["gold", "gems"]

  @Test func lotsHoldTheBalanceOverRandomHistories() async throws {
    try await DomainHarness.with { h in
      let wallet = WalletService(database: h.database, outbox: h.orders.outbox)
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<6 {
          group.addTask {
            var random = RunningBalanceTests.Seeded(state: UInt64(writer) * 104_729 + 3)
            for step in 0..<40 {
              let user = Self.users.randomElement(using: &random) ?? "ana"
              let asset = Self.assets.randomElement(using: &random) ?? "gold"
              let environment = Bool.random(using: &random) ? "Sandbox" : "Production"
              switch Int.random(in: 0..<10, using: &random) {
              case 0..<4:
                try await h.database.execute(
                  """
                  INSERT INTO ledger (user_id, asset, amount, kind, environment)
                  VALUES (\(user), \(asset), \(Int64.random(in: 1...300, using: &random)),
                          'grant', \(environment))
                  """)
              case 4:
                // A take-back beyond what is left may take the balance below zero.
                try await h.database.execute(
                  """
                  INSERT INTO ledger (user_id, asset, amount, kind, environment)
                  VALUES (\(user), \(asset), \(-Int64.random(in: 1...300, using: &random)),
                          'adjustment', \(environment))
                  """)
              default:
                let request = WalletRequest(
                  kind: .spend, userId: user, asset: asset,
                  amount: Int64.random(in: 1...200, using: &random), reason: "test",
                  reference: nil, environment: nil, idempotencyKey: "w\(writer)-\(step)",
                  caller: "anyone", requestId: "r")
                do {
                  let outcome = try await wallet.apply(request)
                  #expect(outcome.operation.balanceAfter >= 0)
                  #expect(outcome.operation.lots.map(\.amount).reduce(0, +) == request.amount)
                } catch WalletRefusal.insufficientBalance(let balance) {
                  #expect(balance < request.amount)
                }
              }
            }
          }
        }
        try await group.waitForAll()
      }
      let rows = try await h.database.query(
        """
        SELECT b.user_id, b.asset, b.total,
               (SELECT coalesce(sum(remaining), 0)::bigint FROM ledger_lots l
                WHERE l.user_id = b.user_id AND l.asset = b.asset) AS held
        FROM user_balances b
        """)
      #expect(!rows.isEmpty)
      for row in rows {
        let total: Int64 = try row.decode("total")
        let held: Int64 = try row.decode("held")
        let user: String = try row.decode("user_id")
        #expect(held == max(total, 0), "\(user)")
      }
      let overAttributed = try await h.database.query(
        """
        SELECT l.id FROM ledger l JOIN ledger_lot_uses u ON u.ledger_id = l.id
        GROUP BY l.id, l.amount HAVING sum(u.amount) > -l.amount
        """)
      #expect(overAttributed.isEmpty)
      let spendsUnattributed = try await h.database.query(
        """
        SELECT l.id FROM ledger l LEFT JOIN ledger_lot_uses u ON u.ledger_id = l.id
        WHERE l.kind = 'spend' GROUP BY l.id, l.amount
        HAVING coalesce(sum(u.amount), 0) <> -l.amount
        """)
      #expect(spendsUnattributed.isEmpty)
    }
  }
}
