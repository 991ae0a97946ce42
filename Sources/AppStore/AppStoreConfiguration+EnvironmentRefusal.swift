import StorekeeperLogging

extension AppStoreConfiguration {
  /// The refusal of a purchase from an environment this server does not accept, with a log line
  /// that names it and the setting. The client only hears `environment_not_allowed`; the operator
  /// of a production-only server (the default) must learn that App Review and TestFlight buy in
  /// the sandbox, or the app is rejected for purchases that never succeed.
  func refuseEnvironment<Value>(_ environment: String?, logger: Logger?) -> VerificationResult<
    Value
  > {
    let named = environment ?? "none"
    var fields: [String: LogValue] = [
      "environment": .string(named), "setting": "APPLE_ENVIRONMENTS",
      "accepted": .string(
        allowedEnvironments.map { $0.lowercased() }.sorted().joined(separator: ",")),
    ]
    if environment == AppStoreEnvironment.sandbox.rawValue {
      fields["hint"] = .string(Self.sandboxHint)
    }
    logger?.warning(
      "purchase refused: its environment \(named) is not in APPLE_ENVIRONMENTS", fields)
    return .refused(.environmentNotAllowed)
  }

  static let sandboxHint =
    "App Review and TestFlight buy in the sandbox: APPLE_ENVIRONMENTS=production,sandbox accepts them (SANDBOX_POLICY decides what they credit)"
}
