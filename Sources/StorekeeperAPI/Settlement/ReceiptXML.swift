import HTTP
import StorekeeperCore

/// `POST /v1/receipts` answered as XML, for seed 000's client, which expects the purchased
/// content back as XML: one `<transaction/>` per transaction in the proof and one `<delivery>`
/// per product delivered, with its content (`writeContent`) and what it granted. The user's
/// entitlements stay in the JSON form only. Refusals are problem+json, as everywhere.
enum ReceiptXML {
  static let contentType = "application/xml; charset=utf-8"

  static func response(_ outcome: ReceiptOutcome, ids: StoreKitProductIds) throws -> Response {
    var xml = XMLWriter()
    xml.open("receipt")
    xml.newline()
    for item in outcome.transactions {
      xml.open(
        "transaction",
        [
          ("transaction_id", item.transactionId),
          ("original_transaction_id", item.originalTransactionId),
          ("product_id", item.productId), ("nid", ids.nid(item.productId)),
          ("status", item.status.rawValue), ("trade_no", item.tradeNo), ("code", item.code),
        ], empty: true)
      xml.newline()
    }
    for delivery in outcome.delivery {
      xml.open(
        "delivery",
        [
          ("product_id", delivery.productId), ("nid", ids.nid(delivery.productId)),
          ("transaction_id", delivery.transactionId), ("quantity", String(delivery.quantity)),
          ("newly_granted", delivery.newlyGranted ? "true" : "false"),
        ])
      try writeContent(delivery.content, into: &xml)
      CatalogXML.writeGrants(delivery.granted, into: &xml, name: "granted")
      xml.close("delivery")
      xml.newline()
    }
    xml.close("receipt")
    xml.newline()
    return Response(status: 200, headers: headers, body: xml.bytes)
  }

  /// `<content>` with one `<field name="…">` per member of the product's content (an
  /// object, sorted by name): a string is its text, so an app's own XML comes back as the
  /// string it stored, escaped once; any other value is its JSON, marked `format="json"`.
  /// Names are attribute values, never element names, so no key can make a malformed tag.
  static func writeContent(_ content: JSONValue, into xml: inout XMLWriter) throws {
    guard case .object(let members) = content else {
      xml.element(
        "content", [("format", "json")],
        text: String(decoding: try JSONCoding.encode(content), as: UTF8.self))
      return
    }
    xml.open("content")
    for (name, value) in members.sorted(by: { $0.key < $1.key }) {
      if case .string(let text) = value {
        xml.element("field", [("name", name)], text: text)
      } else {
        xml.element(
          "field", [("name", name), ("format", "json")],
          text: String(decoding: try JSONCoding.encode(value), as: UTF8.self))
      }
    }
    xml.close("content")
  }

  /// The 202 of a receipt whose verification waits on Apple.
  static func pending(reportId: Int64) -> Response {
    var xml = XMLWriter()
    xml.open(
      "receipt", [("verification", "pending"), ("report_id", String(reportId))], empty: true)
    xml.newline()
    return Response(status: 202, headers: headers, body: xml.bytes)
  }

  private static var headers: HTTPHeaders { HTTPHeaders([("Content-Type", contentType)]) }
}
