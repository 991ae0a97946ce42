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
      try CatalogSnapshot(products: $0, ids: ids)
    }
  }

  /// What `GET /v1/products` serves.
  var list: CatalogSnapshot.Entry { read { $0.list } }

  /// What `GET /v1/products.xml` (or with `Accept: application/xml`) serves.
  var xmlList: CatalogSnapshot.Entry { read { $0.xmlList } }

  /// What `GET /v1/products/{product_id}` serves.
  func entry(_ productId: String) -> CatalogSnapshot.Entry? { read { $0.products[productId] } }
}

/// The active catalog, encoded once per change: requests for it only copy bytes.
package struct CatalogSnapshot: Sendable {
  struct Entry: Sendable {
    var body: [UInt8]
    var etag: String
    /// The headers of its 200 and of its 304, built once here rather than per request.
    var headers: HTTPHeaders
    var notModifiedHeaders: HTTPHeaders

    /// `varies`: the path answers JSON or XML by `Accept`, so caches must key on it.
    init(
      body: [UInt8], etag: String, contentType: String = "application/json", varies: Bool = false
    ) {
      self.body = body
      self.etag = etag
      notModifiedHeaders = HTTPHeaders([("ETag", etag), ("Cache-Control", "no-cache")])
      if varies { notModifiedHeaders.add("Vary", "Accept") }
      headers = notModifiedHeaders
      headers.add("Content-Type", contentType)
    }
  }

  var list: Entry
  /// The list as XML, its own representation with its own ETag.
  var xmlList: Entry
  var products: [String: Entry]

  init(list: Entry, xmlList: Entry, products: [String: Entry]) {
    self.list = list
    self.xmlList = xmlList
    self.products = products
  }

  init(products active: [Product], ids: StoreKitProductIds = StoreKitProductIds(prefix: "")) throws
  {
    struct List: Encodable { var products: [Product.PublicView] }
    let listBody = try JSONCoding.encode(List(products: active.map(\.publicView)))
    var entries: [String: Entry] = [:]
    for product in active {
      let body = try JSONCoding.encode(product.publicView)
      entries[product.productId] = Entry(body: body, etag: Self.etag(of: body))
    }
    let xmlBody = CatalogXML.list(active, ids: ids)
    self.init(
      list: Entry(body: listBody, etag: Self.etag(of: listBody), varies: true),
      xmlList: Entry(
        body: xmlBody, etag: Self.etag(of: xmlBody), contentType: "application/xml; charset=utf-8",
        varies: true),
      products: entries)
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
