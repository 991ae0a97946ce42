import StorekeeperCore

/// The key that signs promotional offers: a dedicated pair, or else the App Store Server API
/// key. Apple issues one kind of in-app purchase key for both uses; a separate pair lets an
/// operator sign offers without turning on notification recovery, or rotate one apart.
extension AppConfig {
  static func readOfferKey(_ env: [String: String], into config: inout AppConfig) throws {
    let path = env["APPLE_OFFER_KEY_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    let keyId = try ConfigReader(env: env).text("APPLE_OFFER_KEY_ID")
    switch (path, keyId) {
    case (nil, nil):
      return
    case (nil, _):
      throw ConfigError(
        variable: "APPLE_OFFER_KEY_FILE", problem: "is required with APPLE_OFFER_KEY_ID")
    case (_, nil):
      throw ConfigError(
        variable: "APPLE_OFFER_KEY_ID", problem: "is required with APPLE_OFFER_KEY_FILE")
    case (let path?, let keyId?):
      (config.offerKeyPath, config.offerKeyId) = (path, keyId)
    }
  }

  static func readOfferEligibility(_ env: [String: String], into config: inout AppConfig) throws {
    guard let text = env["OFFER_ELIGIBILITY"], !text.isEmpty else { return }
    guard let eligibility = OfferEligibility(rawValue: text) else {
      let names = OfferEligibility.allCases.map(\.rawValue)
      throw ConfigError(
        variable: "OFFER_ELIGIBILITY",
        problem: "must be one of \(names.joined(separator: ", ")), got \"\(text)\"")
    }
    config.offerEligibility = eligibility
  }

  /// The key file, its id and the variable to blame when the file is wrong: the dedicated
  /// pair, else the API key's; nil: offers are off.
  var offerKey: (path: String, keyId: String, variable: String)? {
    if let path = offerKeyPath, let keyId = offerKeyId {
      return (path, keyId, "APPLE_OFFER_KEY_FILE")
    }
    if let path = apiKeyPath, let keyId = apiKeyId { return (path, keyId, "APPLE_API_KEY_FILE") }
    return nil
  }
}
