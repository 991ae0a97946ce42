import Foundation
import Postgres

/// Derives what a user owns from the facts (ledger rows, paid orders, Apple transactions),
/// so a refund that flips an order or revokes a transaction is reflected with nothing to sync.
struct EntitlementRepository: Sendable {
  let database: PostgresPool
  let clock: WallClock

  func view(userId: String) async throws -> Entitlements {
    var balances: [String: Int64] = [:]
    var sandboxBalances: [String: Int64] = [:]
    for row in try await database.query(
      """
      SELECT asset, sum(amount)::bigint AS total,
             coalesce(sum(amount) FILTER (WHERE environment = 'Sandbox'), 0)::bigint AS sandbox
      FROM ledger WHERE user_id = \(userId) GROUP BY asset
      """
    ) {
      let asset: String = try row.decode("asset")
      balances[asset] = try row.decode("total")
      let sandbox: Int64 = try row.decode("sandbox")
      if sandbox != 0 { sandboxBalances[asset] = sandbox }
    }

    let owned = try await database.query(
      """
      SELECT o.product_id, p.grants->>'entitlement' AS entitlement,
             bool_and(o.environment = 'Sandbox') AS sandbox
      FROM orders o JOIN products p ON p.product_id = o.product_id
      WHERE o.user_id = \(userId) AND o.trade_status = \(TradeStatus.tradeSuccess) AND p.type = \(ProductType.nonConsumable)
      GROUP BY 1, 2 ORDER BY o.product_id
      """)
    var nonConsumables: [String] = []
    var active: [String: Entitlements.Active] = [:]
    for row in owned {
      let productId: String = try row.decode("product_id")
      nonConsumables.append(productId)
      if let name: String = try row.decodeIfPresent("entitlement") {
        active[name] = .init(
          entitlement: name, expiresAt: nil, productId: productId, source: "non_consumable",
          sandbox: try row.decode("sandbox"))
      }
    }

    let now = clock.milliseconds
    func offer(
      _ name: String, _ expiresMs: Int64, _ productId: String, _ source: String, sandbox: Bool
    ) {
      guard expiresMs > now else { return }
      if let current = active[name] {
        guard let currentExpiry = current.expiresAt.flatMap(Self.parseMs), currentExpiry < expiresMs
        else { return }
      }
      active[name] = .init(
        entitlement: name, expiresAt: Self.format(ms: expiresMs), productId: productId,
        source: source, sandbox: sandbox)
    }

    // Non-renewing: each purchase extends from the later of its payment and the current expiry.
    let nonRenewing = try await database.query(
      """
      SELECT o.product_id, p.grants->>'entitlement' AS entitlement,
             (p.grants->>'duration_days')::bigint * o.quantity AS days,
             (extract(epoch FROM o.paid_at) * 1000)::bigint AS paid_ms,
             o.environment = 'Sandbox' AS sandbox
      FROM orders o JOIN products p ON p.product_id = o.product_id
      WHERE o.user_id = \(userId) AND o.trade_status = \(TradeStatus.tradeSuccess) AND p.type = \(ProductType.nonRenewing)
        AND p.grants ? 'entitlement'
      ORDER BY o.paid_at, o.trade_no
      """)
    var runningExpiry: [String: (expiry: Int64, productId: String, sandbox: Bool)] = [:]
    for row in nonRenewing {
      let name: String = try row.decode("entitlement")
      let days: Int64 = try row.decodeIfPresent("days") ?? 0
      let paid: Int64 = try row.decode("paid_ms")
      let sandbox = try row.decodeIfPresent("sandbox", as: Bool.self) ?? false
      let start = max(paid, runningExpiry[name]?.expiry ?? 0)
      runningExpiry[name] = (
        start + days * 86_400_000, try row.decode("product_id"),
        sandbox && (runningExpiry[name]?.sandbox ?? true)
      )
    }
    for (name, running) in runningExpiry {
      offer(name, running.expiry, running.productId, "non_renewing", sandbox: running.sandbox)
    }

    // Auto-renewable: Apple's latest expiresDate (or grace period) on a non-revoked transaction.
    let subscriptions = try await database.query(
      """
      SELECT p.grants->>'entitlement' AS entitlement, t.product_id,
             (extract(epoch FROM max(greatest(t.expires_date, s.grace_expires_at))) * 1000)::bigint AS expires_ms,
             bool_and(t.environment = 'Sandbox') AS sandbox
      FROM apple_transactions t
      JOIN products p ON p.product_id = t.product_id
      LEFT JOIN subscription_states s ON s.original_transaction_id = t.original_transaction_id
      WHERE t.user_id = \(userId) AND p.type = \(ProductType.autoRenewable) AND t.revocation_date IS NULL
        AND p.grants ? 'entitlement'
      GROUP BY 1, 2
      """)
    for row in subscriptions {
      guard let expiry: Int64 = try row.decodeIfPresent("expires_ms") else { continue }
      offer(
        try row.decode("entitlement"), expiry, try row.decode("product_id"), "auto_renewable",
        sandbox: try row.decode("sandbox"))
    }

    return Entitlements(
      userId: userId, balances: balances, sandboxBalances: sandboxBalances,
      entitlements: active.values.sorted { $0.entitlement < $1.entitlement },
      nonConsumables: nonConsumables)
  }

  static func format(ms: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
  }

  static func parseMs(_ text: String) -> Int64? {
    Timestamp.parse(text).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
  }
}
