extension Delivery {
  /// The fields as `Encodable` names them; a nil `transaction_id` is left out, as it encodes.
  var jsonValue: JSONValue {
    var fields: [String: JSONValue] = [
      "content": content, "granted": granted.jsonValue, "newly_granted": .bool(newlyGranted),
      "product_id": .string(productId), "quantity": .number(String(quantity)),
    ]
    fields["transaction_id"] = transactionId.map { .string($0) }
    return .object(fields)
  }
}
