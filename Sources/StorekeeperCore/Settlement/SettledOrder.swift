/// The 200 answer to a successful report: the settled order and its delivery.
package struct SettledOrder: Encodable, Sendable {
  var order: Order
  var delivery: Delivery
}

/// The 202 answer while Apple cannot be asked: the order, still waiting, and the report id.
package struct PendingVerification: Encodable, Sendable {
  var order: Order
  var verification = "pending"
  var reportId: Int64

  enum CodingKeys: String, CodingKey {
    case order, verification
    case reportId = "report_id"
  }
}
