extension SettledOrder {
  /// The JSON `JSONCoding` makes of the answer, written directly like `Order.json`: the
  /// generic encoder was a twentieth of the server's CPU per settled report. A test holds the
  /// two to the same bytes.
  package func json() throws -> [UInt8] {
    var out = Array(#"{"delivery":"#.utf8)
    out.reserveCapacity(1024)
    try delivery.jsonValue.appendSortedJSON(to: &out)
    out.append(contentsOf: #","order":"#.utf8)
    out.append(contentsOf: order.json)
    out.append(UInt8(ascii: "}"))
    return out
  }
}
