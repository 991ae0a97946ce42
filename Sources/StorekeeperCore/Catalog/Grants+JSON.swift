import StorekeeperLogging

extension Grants {
  /// Keys in the encoder's sorted order, nil fields left out.
  func appendJSON(to out: inout [UInt8]) {
    out.append(UInt8(ascii: "{"))
    var first = true
    func key(_ name: String) {
      if !first { out.append(UInt8(ascii: ",")) }
      first = false
      JSONString.append(name, to: &out)
      out.append(UInt8(ascii: ":"))
    }
    if let balance {
      key("balance")
      out.append(UInt8(ascii: "{"))
      for (index, asset) in balance.keys.sorted().enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        JSONString.append(asset, to: &out)
        out.append(UInt8(ascii: ":"))
        out.append(contentsOf: String(balance[asset] ?? 0).utf8)
      }
      out.append(UInt8(ascii: "}"))
    }
    if let durationDays {
      key("duration_days")
      out.append(contentsOf: String(durationDays).utf8)
    }
    if let entitlement {
      key("entitlement")
      JSONString.append(entitlement, to: &out)
    }
    out.append(UInt8(ascii: "}"))
  }
}
