/// A JSON scalar read as text: verifyReceipt sends numbers as strings ("purchase_date_ms":
/// "1698148900000") but not always, so either spelling decodes to the same string.
struct FlexibleString: Decodable, Sendable, Equatable {
  var value: String

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let text = try? container.decode(String.self) {
      value = text
    } else if let number = try? container.decode(Int64.self) {
      value = String(number)
    } else if let flag = try? container.decode(Bool.self) {
      value = flag ? "true" : "false"
    } else {
      let number = try container.decode(Double.self)
      value = String(number)
    }
  }

  var int64: Int64? { Int64(value) }

  var bool: Bool? {
    switch value.lowercased() {
    case "true", "1": true
    case "false", "0": false
    default: nil
    }
  }
}
