/// The 202 answer to a receipt post that waits on the store: the report the retry worker owns.
struct PendingReceipt: Encodable {
  var verification = "pending"
  var reportId: Int64

  enum CodingKeys: String, CodingKey {
    case verification
    case reportId = "report_id"
  }
}
