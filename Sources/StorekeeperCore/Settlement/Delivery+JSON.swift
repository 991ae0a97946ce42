import StorekeeperLogging

extension Delivery {
  /// Keys in the encoder's sorted order; `transaction_id` left out when nil.
  func appendJSON(to out: inout [UInt8]) throws {
    out.append(contentsOf: #"{"content":"#.utf8)
    try content.appendSortedJSON(to: &out)
    out.append(contentsOf: #","granted":"#.utf8)
    granted.appendJSON(to: &out)
    out.append(contentsOf: #","newly_granted":"#.utf8)
    out.append(contentsOf: (newlyGranted ? "true" : "false").utf8)
    out.append(contentsOf: #","product_id":"#.utf8)
    JSONString.append(productId, to: &out)
    out.append(contentsOf: #","quantity":"#.utf8)
    out.append(contentsOf: String(quantity).utf8)
    if let transactionId {
      out.append(contentsOf: #","transaction_id":"#.utf8)
      JSONString.append(transactionId, to: &out)
    }
    out.append(UInt8(ascii: "}"))
  }
}
