/// A history filter Apple would refuse: the parameter it names.
enum FakeHistoryFilterError: Error, Equatable {
  case invalid(String)

  /// Apple's error code and message for it (the App Store Server API's error codes).
  var answer: (code: Int, message: String) {
    switch self {
    case .invalid("startDate"): (4_000_015, "Invalid start date.")
    case .invalid("endDate"): (4_000_016, "Invalid end date.")
    case .invalid("productType"): (4_000_022, "Invalid product type.")
    case .invalid("inAppOwnershipType"): (4_000_026, "Invalid in-app ownership type.")
    case .invalid("revoked"): (4_000_030, "Invalid revoked.")
    case .invalid(let name): (4_000_000, "Invalid request: \(name).")
    }
  }
}
