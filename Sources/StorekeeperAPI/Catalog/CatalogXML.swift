import StorekeeperCore

/// The catalog as seed 000's client reads it: `<products>` of `<product nid="…">`, built once
/// per catalog change beside the JSON (`CatalogSnapshot`). A product whose id does not start
/// with the prefix is left out: that client could not name it in StoreKit. Prices are a
/// storefront's where it has its own (`price`), else the product's default.
enum CatalogXML {
  static func list(
    _ products: [Product], ids: StoreKitProductIds,
    price: (Product) -> StorefrontPrice? = { _ in nil }
  ) -> [UInt8] {
    var xml = XMLWriter()
    xml.open("products", [("id_prefix", ids.prefix)])
    xml.newline()
    for product in products {
      guard let nid = ids.nid(product.productId) else { continue }
      write(product, nid: nid, price: price(product), into: &xml)
      xml.newline()
    }
    xml.close("products")
    xml.newline()
    return xml.bytes
  }

  static func write(
    _ product: Product, nid: String, price: StorefrontPrice?, into xml: inout XMLWriter
  ) {
    xml.open(
      "product",
      [
        ("nid", nid), ("product_id", product.productId), ("type", product.type.rawValue),
        ("price", price?.price ?? product.price),
        ("currency", price?.currency ?? product.currency),
        ("sort_order", String(product.sortOrder)),
      ])
    xml.element("title", text: product.title)
    xml.element("description", text: product.description)
    writeGrants(product.grants, into: &xml)
    xml.close("product")
  }

  /// `<grants>` with one `<balance asset="…" amount="…"/>` per asset (sorted) and the
  /// entitlement, if any; shared with the receipts' XML.
  static func writeGrants(_ grants: Grants, into xml: inout XMLWriter, name: String = "grants") {
    xml.open(name)
    for (asset, amount) in (grants.balance ?? [:]).sorted(by: { $0.key < $1.key }) {
      xml.open("balance", [("asset", asset), ("amount", String(amount))], empty: true)
    }
    if let entitlement = grants.entitlement {
      xml.open(
        "entitlement",
        [("id", entitlement), ("duration_days", grants.durationDays.map(String.init))],
        empty: true)
    }
    xml.close(name)
  }
}
