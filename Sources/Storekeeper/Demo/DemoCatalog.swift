import Postgres
import StorekeeperCore

/// A demo catalog shaped like seed 002: five consumable gold packs and three VIP products.
public enum DemoCatalog {
  static let prefix = "com.example.storekeeper."

  static let products: [ProductDraft] = {
    let gold: [(String, Int64, String)] = [
      ("gold60", 60, "6.00"), ("gold300", 300, "30.00"), ("gold680", 680, "68.00"),
      ("gold1280", 1280, "128.00"), ("gold3280", 3280, "328.00"),
    ]
    var drafts = gold.enumerated().map { index, pack in
      ProductDraft(
        productId: prefix + pack.0, type: .consumable, title: "\(pack.1) Gold",
        description: "A pouch of \(pack.1) gold.", price: pack.2, currency: "CNY",
        sortOrder: Int32(10 * (index + 1)), active: true, grants: Grants(balance: ["gold": pack.1]),
        content: .object(["message": .string("You received \(pack.1) gold.")]))
    }
    drafts.append(
      ProductDraft(
        productId: prefix + "vip.month", type: .nonRenewing, title: "VIP, 1 month",
        description: "VIP for 30 days.", price: "30.00", currency: "CNY", sortOrder: 100,
        active: true,
        grants: Grants(entitlement: "vip", durationDays: 30),
        content: .object(["message": .string("Welcome to VIP.")])))
    drafts.append(
      ProductDraft(
        productId: prefix + "vip.quarter", type: .nonRenewing, title: "VIP, 3 months",
        description: "VIP for 90 days.", price: "78.00", currency: "CNY", sortOrder: 110,
        active: true,
        grants: Grants(entitlement: "vip", durationDays: 90),
        content: .object(["message": .string("Welcome to VIP.")])))
    drafts.append(
      ProductDraft(
        productId: prefix + "vip.monthly", type: .autoRenewable, title: "VIP, monthly subscription",
        description: "VIP renewed every month until cancelled.", price: "25.00", currency: "CNY",
        sortOrder: 120, active: true, grants: Grants(entitlement: "vip"),
        content: .object(["message": .string("Welcome to VIP.")])))
    return drafts
  }()

  /// Inserts the demo products that do not exist yet; returns how many were added.
  public static func load(into database: PostgresPool) async throws -> Int {
    var added = 0
    for draft in products {
      let grants = try JSONCoding.text(draft.grants)
      let content = try JSONCoding.text(draft.content)
      added += try await database.execute(
        """
        INSERT INTO products (product_id, type, title, description, price, currency, sort_order,
                              active, grants, content)
        VALUES (\(draft.productId), \(draft.type.rawValue), \(draft.title), \(draft.description),
                \(draft.price)::numeric, \(draft.currency), \(draft.sortOrder), true,
                \(grants)::jsonb, \(content)::jsonb)
        ON CONFLICT (product_id) DO NOTHING
        """)
    }
    try await database.execute("SELECT pg_notify(\(CatalogRepository.channel), 'demo')")
    return added
  }
}
