import AppStore
import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// Issue 23: entitlements are derived per change (`storekeeper_user_state`) and recorded on
/// every event, so over random histories of purchases, renewals, upgrades, grace periods, refunds and
/// time passing, what the entitlements view answers, the `user_state` of the user's latest
/// event and a recomputation written here from the purchases the test made must stay equal.
/// A failure names its seed; `STOREKEEPER_TEST_SEED=<seed>` replays that history alone.
@Suite(.database) struct EntitlementHistoryTests {
  /// Several products per name, each kind, so the longest-lasting source must win.
  static let catalog: [String: (type: ProductType, entitlement: String?, days: Int64)] = [
    "pro.founder": (.nonConsumable, "pro", 0), "pro.lifetime": (.nonConsumable, "pro", 0),
    "theme": (.nonConsumable, nil, 0), "pro.week": (.nonRenewing, "pro", 7),
    "pro.month": (.nonRenewing, "pro", 30), "club.pass": (.nonRenewing, "club", 3),
    "pro.sub": (.autoRenewable, "pro", 0), "club.sub": (.autoRenewable, "club", 0),
    "club.year": (.autoRenewable, "club", 0),
  ]
  static let users = ["ana", "bo", "chen"]
  static let day: Int64 = 86_400_000
  static let seeds: [UInt64] =
    ProcessInfo.processInfo.environment["STOREKEEPER_TEST_SEED"].flatMap { UInt64($0) }
    .map { [$0] } ?? [1, 2, 3, 4, 5, 6]

  /// One Apple transaction the test posted, as the recomputation needs it.
  struct Purchase {
    var user: String
    var transaction: VerifiedTransaction
    var type: ProductType
    /// When its order was paid, in µs: what the recomputation stacks non-renewing purchases by.
    var paidUs: Int64
    var tradeNo: String
    var revoked = false
    var sandbox: Bool { transaction.environment == "Sandbox" }
  }

  /// What the user owns at `nowMs`, from the raw purchases alone: non-consumables forever;
  /// non-renewing purchases stacking in payment order, each from the later of its payment and
  /// the running expiry; an auto-renewable product until the latest expiry of its transactions
  /// not revoked, cut where an upgrade to another product began, or the grace of its
  /// subscription's latest period; per name the longest wins, the expired are dropped. `sandbox`:
  /// every purchase the winning source rests on was made in the sandbox: a non-renewing name's
  /// purchases since it last lapsed, the product's transactions whose period ends last.
  static func recomputed(_ all: [Purchase], grace: [String: Int64], user: String, nowMs: Int64)
    -> (entitlements: [Entitlements.Active], nonConsumables: [String])
  {
    let mine = all.filter { $0.user == user && !$0.revoked }
    func ofProduct(_ id: String) -> [Purchase] { mine.filter { $0.transaction.productId == id } }
    var active: [String: (expiresMs: Int64?, entry: Entitlements.Active)] = [:]
    func entry(_ name: String, _ product: String, _ source: String, _ sandbox: Bool, _ ms: Int64?)
      -> Entitlements.Active
    {
      Entitlements.Active(
        entitlement: name, expiresAt: ms.map(rfc3339), productId: product, source: source,
        sandbox: sandbox)
    }
    let owned = Set(mine.filter { $0.type == .nonConsumable }.map(\.transaction.productId))
    // Two forever sources of one name: the greater product id is the one shown (SQL's order).
    for product in owned.sorted() {
      guard let name = catalog[product]?.entitlement else { continue }
      active[name] = (
        nil, entry(name, product, "non_consumable", ofProduct(product).allSatisfy(\.sandbox), nil)
      )
    }
    var running: [String: (expiresMs: Int64, product: String, sandbox: Bool)] = [:]
    let renewing = mine.filter { $0.type == .nonRenewing }.sorted {
      ($0.paidUs, $0.tradeNo) < ($1.paidUs, $1.tradeNo)
    }
    for purchase in renewing {
      let product = purchase.transaction.productId
      guard let (_, entitlement, days) = catalog[product], let name = entitlement else { continue }
      let paidMs = (purchase.paidUs + 500) / 1000
      let previous = running[name]
      running[name] = (
        max(paidMs, previous?.expiresMs ?? 0) + days * Int64(purchase.transaction.quantity) * day,
        product, purchase.sandbox && (previous.map { $0.expiresMs <= paidMs || $0.sandbox } ?? true)
      )
    }
    var offers = running.map {
      ($0.key, $0.value.expiresMs, $0.value.product, "non_renewing", $0.value.sandbox)
    }
    var subscriptions: [(String, Int64, String, String, Bool)] = []
    for (product, item) in catalog where item.type == .autoRenewable {
      let paid = ofProduct(product)
      guard let name = item.entitlement, !paid.isEmpty else { continue }
      // Per subscription, the product's latest period: a later purchase of another of the
      // subscription's products (an upgrade, any user's, revoked or not) ends it when it
      // begins; otherwise Apple's grace extends it when no transaction of the subscription
      // begun since (any user's, revoked or not) outlasts it.
      var ends: [(ms: Int64, sandbox: Bool)] = []
      for original in Set(paid.map(\.transaction.originalTransactionId)) {
        let own = paid.filter { $0.transaction.originalTransactionId == original }
        let whole = all.filter { $0.transaction.originalTransactionId == original }
        let expires = own.map { $0.transaction.expiresDate ?? .min }.max() ?? .min
        let began =
          own.filter { ($0.transaction.expiresDate ?? .min) == expires }
          .map(\.transaction.purchaseDate).max() ?? .min
        let cut = whole.filter {
          $0.transaction.productId != product && $0.transaction.purchaseDate > began
        }.map(\.transaction.purchaseDate).min()
        let outlived = whole.contains {
          ($0.transaction.expiresDate ?? .min) > expires && $0.transaction.purchaseDate >= began
        }
        let until =
          if let cut { min(expires, cut) } else if outlived { expires } else {
            max(expires, grace[original] ?? .min)
          }
        ends.append((until, own.allSatisfy(\.sandbox)))
      }
      let expires = ends.map(\.ms).max() ?? .min
      subscriptions.append(
        (
          name, expires, product, "auto_renewable",
          ends.filter { $0.ms == expires }.allSatisfy(\.sandbox)
        ))
    }
    // Equal expiries: the non-renewing first, then subscriptions by product id; only a strictly
    // later expiry replaces what a name has.
    offers += subscriptions.sorted { ($1.1, $0.2) < ($0.1, $1.2) }
    for (name, expiresMs, product, source, sandbox) in offers where expiresMs > nowMs {
      if let current = active[name] {
        guard let have = current.expiresMs, have < expiresMs else { continue }
      }
      active[name] = (expiresMs, entry(name, product, source, sandbox, expiresMs))
    }
    return (active.keys.sorted().compactMap { active[$0]?.entry }, owned.sorted())
  }

  /// `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC, worked out here rather than by the server's formatter.
  static func rfc3339(_ ms: Int64) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = .gmt
    let parts = calendar.dateComponents(
      [.year, .month, .day, .hour, .minute, .second],
      from: Date(timeIntervalSince1970: TimeInterval(ms / 1000)))
    func pad(_ value: Int?, _ width: Int) -> String {
      let text = String(value ?? 0)
      return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T"
      + "\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))."
      + "\(pad(Int(ms % 1000), 3))Z"
  }

  /// Apple's DID_FAIL_TO_RENEW in a grace period, as `NotificationService` stores it.
  static func gracePeriod(_ original: String, untilMs: Int64) throws -> StoredNotification {
    let document: [String: Any] = [
      "notification": [
        "notificationType": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD",
        "notificationUUID": UUID().uuidString, "version": "2.0",
      ],
      "renewal_info": ["originalTransactionId": original, "gracePeriodExpiresDate": untilMs],
    ]
    return try JSONDecoder().decode(
      StoredNotification.self, from: try JSONSerialization.data(withJSONObject: document))
  }

  /// The view, the user's latest event and the recomputation, for every user: a step for one
  /// user must not change another's, and time passing changes everyone's.
  static func compare(
    _ h: DomainHarness, _ purchases: [Purchase], grace: [String: Int64], _ context: String
  ) async throws {
    for user in users {
      let expected = recomputed(
        purchases, grace: grace, user: user, nowMs: h.clock.clock.milliseconds)
      let view = try await h.entitlements.view(userId: user)
      try #require(view.entitlements == expected.entitlements, "\(context): view of \(user)")
      try #require(view.nonConsumables == expected.nonConsumables, "\(context): view of \(user)")
      let latest = try await h.database.query(
        """
        SELECT user_state::text AS state FROM events WHERE user_id = \(user)
        ORDER BY sequence DESC LIMIT 1
        """)
      guard let row = latest.first else {
        try #require(
          expected.entitlements.isEmpty && expected.nonConsumables.isEmpty,
          "\(context): \(user) has no event")
        continue
      }
      let recorded = try JSONCoding.decode(Entitlements.self, fromText: try row.decode("state"))
      try #require(recorded.entitlements == expected.entitlements, "\(context): event of \(user)")
      try #require(
        recorded.nonConsumables == expected.nonConsumables, "\(context): event of \(user)")
    }
  }

  @Test(arguments: seeds) func entitlementsOverRandomHistoriesEqualAFullRecomputation(
    seed: UInt64
  ) async throws {
    try await DomainHarness.with { h in
      for (id, item) in Self.catalog {
        var grants: [String: Any] = [:]
        if let name = item.entitlement { grants["entitlement"] = name }
        if item.days > 0 { grants["duration_days"] = item.days }
        let json = try JSONSerialization.data(withJSONObject: grants, options: .sortedKeys)
        try await h.addProduct(id, type: item.type, grants: String(decoding: json, as: UTF8.self))
      }
      var random = RunningBalanceTests.Seeded(state: seed)
      var purchases: [Purchase] = []
      var grace: [String: Int64] = [:]
      for step in 0..<100 {
        let user = Self.users.randomElement(using: &random) ?? "ana"
        // A second between steps, so no two payments share an instant.
        h.clock.advance(by: 1)
        let nowMs = h.clock.clock.milliseconds
        let context = "seed \(seed) step \(step) (\(user))"
        let subscribed = purchases.indices.filter {
          purchases[$0].user == user && purchases[$0].type == .autoRenewable
        }
        let pick = subscribed.randomElement(using: &random)
        let original = pick.map { purchases[$0].transaction.originalTransactionId } ?? ""
        let periodEnd =
          purchases.filter { $0.transaction.originalTransactionId == original }
          .compactMap(\.transaction.expiresDate).max() ?? nowMs
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<9:  // a purchase, through a receipt post as an app sends it
          // Non-consumables are bought at a quarter of the steps only: one owns its name for
          // good, hiding every other source of it until a refund.
          let products = Self.catalog.keys.sorted().filter {
            step % 4 == 0 || Self.catalog[$0]?.type != .nonConsumable
          }
          let product = products.randomElement(using: &random) ?? "pro.week"
          let type = Self.catalog[product]?.type ?? .nonRenewing
          let apple: String =
            switch type {
            case .nonConsumable: "Non-Consumable"
            case .nonRenewing: "Non-Renewing Subscription"
            default: "Auto-Renewable Subscription"
            }
          let id = "\(seed)-\(step)"
          let transaction = VerifiedTransaction(
            transactionId: id, originalTransactionId: id, bundleId: DomainHarness.bundleId,
            productId: product,
            quantity: type == .nonRenewing ? Int.random(in: 1...3, using: &random) : 1,
            purchaseDate: nowMs,
            expiresDate: type == .autoRenewable
              ? nowMs + Int64.random(in: 1...20 * Self.day, using: &random) : nil,
            environment: Bool.random(using: &random) ? "Sandbox" : "Production", type: apple)
          let outcome = try await h.receipts.apply([transaction], userId: user, productId: nil)
          let item = try #require(outcome.transactions.first, "\(context)")
          try #require(item.status == .settled, "\(context)")
          let tradeNo = try #require(item.tradeNo, "\(context)")
          var purchase = Purchase(
            user: user, transaction: transaction, type: type, paidUs: 0, tradeNo: tradeNo)
          guard type == .nonRenewing else {
            purchases.append(purchase)
            break
          }
          // The order's paid_at is the database's now(), which the test's clock cannot move,
          // so every purchase of a history would stack on the one before. Compared first as
          // the settlement recorded it, the payment is then dated at the test's time by direct
          // SQL, and an append with no events of its own (what the user's next change would
          // do) records the state that implies.
          let paid = try await h.database.query(
            """
            SELECT (extract(epoch FROM paid_at) * 1000000)::bigint AS us FROM orders
            WHERE trade_no = \(tradeNo)
            """)
          purchase.paidUs = try #require(paid.first, "\(context)").decode("us")
          try await Self.compare(h, purchases + [purchase], grace: grace, "\(context), settled")
          purchase.paidUs = nowMs * 1000
          try await h.database.execute(
            """
            UPDATE orders SET paid_at = timestamptz 'epoch' + \(nowMs)::bigint * interval '1 ms'
            WHERE trade_no = \(tradeNo)
            """)
          purchases.append(purchase)
          try await h.orders.outbox.append([], for: user, on: h.database)
        case 10:  // an upgrade (or crossgrade) to another product of the subscription, at once
          guard let pick else { continue }
          let others = Self.catalog.keys.sorted().filter {
            Self.catalog[$0]?.type == .autoRenewable
              && $0 != purchases[pick].transaction.productId
          }
          var upgrade = purchases[pick].transaction
          upgrade.transactionId = "\(seed)-\(step)"
          upgrade.productId = others.randomElement(using: &random) ?? "club.year"
          upgrade.purchaseDate = nowMs
          upgrade.expiresDate = nowMs + Int64.random(in: 1...20 * Self.day, using: &random)
          let outcome = try await h.apply(
            DomainHarness.notification(
              "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", transaction: upgrade))
          try #require(outcome == .processed(.renewalRecorded), "\(context)")
          purchases.append(
            Purchase(user: user, transaction: upgrade, type: .autoRenewable, paidUs: 0, tradeNo: "")
          )
          grace[original] = nil
        case 9:  // Apple renews a subscription (new transaction, later expiry)
          guard let pick else { continue }
          var renewal = purchases[pick].transaction
          renewal.transactionId = "\(seed)-\(step)"
          renewal.purchaseDate = nowMs
          renewal.expiresDate =
            max(periodEnd, nowMs) + Int64.random(in: 1...20 * Self.day, using: &random)
          let outcome = try await h.apply(
            DomainHarness.notification("DID_RENEW", transaction: renewal))
          try #require(outcome == .processed(.renewalRecorded), "\(context)")
          purchases.append(
            Purchase(user: user, transaction: renewal, type: .autoRenewable, paidUs: 0, tradeNo: "")
          )
          grace[original] = nil
        case 11:  // Apple extends one period
          guard let pick else { continue }
          purchases[pick].transaction.expiresDate =
            (purchases[pick].transaction.expiresDate ?? nowMs)
            + Int64.random(in: 1...10 * Self.day, using: &random)
          let outcome = try await h.apply(
            DomainHarness.notification("RENEWAL_EXTENDED", transaction: purchases[pick].transaction)
          )
          try #require(outcome == .processed(.datesUpdated), "\(context)")
        case 12:  // billing fails at the period's end: a grace period beyond it
          guard pick != nil else { continue }
          let until = periodEnd + Int64.random(in: 0...10 * Self.day, using: &random)
          try #require(
            try await h.apply(Self.gracePeriod(original, untilMs: until))
              == .processed(.gracePeriod), "\(context)")
          grace[original] = until
        case 13:  // the subscription expires: its grace period ends with it
          guard pick != nil else { continue }
          let outcome = try await h.apply(
            DomainHarness.notification("EXPIRED", originalTransactionId: original))
          try #require(outcome == .processed(.expired), "\(context)")
          grace[original] = nil
        case 14..<16:  // a refund of any of the user's purchases
          guard
            let index = purchases.indices.filter({
              purchases[$0].user == user && !purchases[$0].revoked
            }).randomElement(using: &random)
          else { continue }
          var refunded = purchases[index].transaction
          refunded.revocationDate = nowMs
          try #require(
            try await h.apply(DomainHarness.notification("REFUND", transaction: refunded))
              == .processed(.refunded), "\(context)")
          purchases[index].revoked = true
        case 16:  // and its reversal
          guard
            let index = purchases.indices.filter({
              purchases[$0].user == user && purchases[$0].revoked
            }).randomElement(using: &random)
          else { continue }
          let outcome = try await h.apply(
            DomainHarness.notification("REFUND_REVERSED", transaction: purchases[index].transaction)
          )
          try #require(outcome == .processed(.refundReversed), "\(context)")
          purchases[index].revoked = false
        default:  // time passes; the expiry sweep records what ran out
          h.clock.advance(by: TimeInterval(Int.random(in: 3_600...5 * 86_400, using: &random)))
          _ = try await h.orders.outbox.sweepExpired(on: h.database)
        }
        try await Self.compare(h, purchases, grace: grace, context)
      }
    }
  }
}
