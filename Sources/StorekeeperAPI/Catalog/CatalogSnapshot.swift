import HTTP
import StorekeeperCore
import StorekeeperLogging

/// The catalog the API serves: `CatalogCache` of the active catalog encoded once per change,
/// so requests for it only copy bytes.
package typealias ServedCatalog = CatalogCache<CatalogSnapshot>

extension ServedCatalog {
  /// `xmlProductIdPrefix` (`XML_PRODUCT_ID_PREFIX`) names the products in the XML list.
  package convenience init(
    repository: CatalogRepository, logger: Logger, xmlProductIdPrefix: String = ""
  ) throws {
    let ids = StoreKitProductIds(prefix: xmlProductIdPrefix)
    try self.init(repository: repository, logger: logger) {
      try CatalogSnapshot(contents: $0, ids: ids)
    }
  }

  /// What `GET /v1/products` serves (in `storefront`, alpha-3, when the request names one).
  func list(storefront: String? = nil) -> CatalogSnapshot.Entry {
    read { snapshot in
      if let storefront, let listing = snapshot.storefronts[storefront] { return listing.list }
      return snapshot.list
    }
  }

  /// What `GET /v1/products.xml` (or with `Accept: application/xml`) serves, in `storefront`
  /// like the JSON.
  func xmlList(storefront: String? = nil) -> CatalogSnapshot.Entry {
    read { snapshot in
      if let storefront, let listing = snapshot.storefronts[storefront] { return listing.xmlList }
      return snapshot.xmlList
    }
  }

  /// What `GET /v1/products/{product_id}` serves.
  func entry(_ productId: String, storefront: String? = nil) -> CatalogSnapshot.Entry? {
    read { snapshot in
      if let storefront, let listing = snapshot.storefronts[storefront] {
        return listing.products[productId]
      }
      return snapshot.products[productId]
    }
  }
}

/// The active catalog, encoded once per change: requests for it only copy bytes. A storefront
/// where some product has a price of its own has its own listing; every other storefront is
/// served the default one, whose bytes (and ETag) are what it would be anyway.
package struct CatalogSnapshot: Sendable {
  struct Entry: Sendable {
    var body: [UInt8]
    var etag: String
    /// The headers of its 200 and of its 304, built once here rather than per request.
    var headers: HTTPHeaders
    var notModifiedHeaders: HTTPHeaders

    /// `vary`: the request headers the answer depends on, which a shared cache must key on.
    init(
      body: [UInt8], etag: String, contentType: String = "application/json",
      vary: String = StorefrontRequest.header
    ) {
      self.body = body
      self.etag = etag
      notModifiedHeaders = HTTPHeaders([
        ("ETag", etag), ("Cache-Control", "no-cache"), ("Vary", vary),
      ])
      headers = notModifiedHeaders
      headers.add("Content-Type", contentType)
    }

    /// The same body with one more header on its 200 and its 304, as a representation of its
    /// own: the header's value is mixed into the ETag, so a validator taken with the header
    /// (an experiment's variant) never revalidates an answer without it, or with another.
    func adding(_ name: String, _ value: String) -> Entry {
      var entry = self
      entry.etag = CatalogSnapshot.etag(of: body + Array("\n\(name): \(value)".utf8))
      entry.headers.replaceOrAdd("ETag", entry.etag)
      entry.notModifiedHeaders.replaceOrAdd("ETag", entry.etag)
      entry.headers.add(name, value)
      entry.notModifiedHeaders.add(name, value)
      return entry
    }
  }

  /// The list and each product, in one storefront or with default prices, and the list as
  /// XML (the default's own entry when the storefront prices none of the XML's products).
  struct Listing: Sendable {
    var list: Entry
    var products: [String: Entry]
    var xmlList: Entry
  }

  /// `GET /v1/products` answers JSON or XML by `Accept`, in the storefront it names.
  static let listVary = "Accept, " + StorefrontRequest.header

  var list: Entry
  /// The list as XML for seed 000's client, with default prices: its own representation with
  /// its own ETag. A storefront's is in its `Listing`.
  var xmlList: Entry
  var products: [String: Entry]
  /// By alpha-3 storefront, only those with a price of their own.
  var storefronts: [String: Listing]
  var offerings: ServedOfferings

  init(contents: CatalogContents, ids: StoreKitProductIds = StoreKitProductIds(prefix: "")) throws {
    let active = contents.products
    let byStorefront = Self.pricesByStorefront(contents.prices)
    let plain = try Self.listing(active, ids: ids, defaultXML: nil) { _ in nil }
    list = plain.list
    products = plain.products
    xmlList = plain.xmlList
    var storefronts: [String: Listing] = [:]
    for (storefront, prices) in byStorefront {
      storefronts[storefront] = try Self.listing(active, ids: ids, defaultXML: plain.xmlList) {
        prices[$0.productId]
      }
    }
    self.storefronts = storefronts
    offerings = try ServedOfferings(contents: contents, pricesByStorefront: byStorefront)
  }

  /// `[storefront: [product id: price]]`.
  static func pricesByStorefront(_ prices: [String: [StorefrontPrice]])
    -> [String: [String: StorefrontPrice]]
  {
    var table: [String: [String: StorefrontPrice]] = [:]
    for price in prices.values.joined() {
      table[price.storefront, default: [:]][price.productId] = price
    }
    return table
  }

  /// `defaultXML`: the default listing's XML, shared when this one's bytes are the same.
  private static func listing(
    _ active: [Product], ids: StoreKitProductIds, defaultXML: Entry?,
    price: (Product) -> StorefrontPrice?
  ) throws -> Listing {
    struct List: Encodable { var products: [Product.PublicView] }
    let views = active.map { $0.publicView(at: price($0)) }
    let listBody = try JSONCoding.encode(List(products: views))
    var entries: [String: Entry] = [:]
    for (product, view) in zip(active, views) {
      let body = try JSONCoding.encode(view)
      entries[product.productId] = Entry(body: body, etag: Self.etag(of: body))
    }
    let xmlBody = CatalogXML.list(active, ids: ids, price: price)
    let xml =
      defaultXML.flatMap { $0.body == xmlBody ? $0 : nil }
      ?? Entry(
        body: xmlBody, etag: Self.etag(of: xmlBody),
        contentType: "application/xml; charset=utf-8", vary: Self.listVary)
    return Listing(
      list: Entry(body: listBody, etag: Self.etag(of: listBody), vary: Self.listVary),
      products: entries, xmlList: xml)
  }

  /// A strong validator from the bytes themselves (64-bit FNV-1a plus length), so every
  /// instance serving the same catalog gives the same ETag.
  static func etag(of bytes: [UInt8]) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
      hash ^= UInt64(byte)
      hash &*= 0x0000_0100_0000_01B3
    }
    let hex = String(hash, radix: 16)
    return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "-\(bytes.count)\""
  }
}
