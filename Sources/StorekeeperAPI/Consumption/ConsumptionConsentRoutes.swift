import HTTP
import StorekeeperCore

/// `/v1/users/{user_id}/consumption-consent`: whether the user consented to their consumption
/// data going to Apple when they ask for a refund, as the app records it (a signed-in user for
/// themselves, the backend for anyone). Without consent no consumption answer is sent.
package struct ConsumptionConsentRoutes: Sendable {
  let answers: ConsumptionAnswers
  let auth: AppAuthenticator

  package init(answers: ConsumptionAnswers, auth: AppAuthenticator) {
    self.answers = answers
    self.auth = auth
  }

  package func register(_ router: inout APIRouter) {
    let path = "/v1/users/{user_id}/consumption-consent"
    router.add(.get, path) { request, context in
      let caller = try await auth.caller(request, context)
      let userId = try auth.user(caller, named: try WalletRoutes.userId(context)) ?? ""
      return try JSONCoding.response(try await answers.consent(userId: userId))
    }
    router.add(.put, path) { request, context in
      let caller = try await auth.caller(request, context)
      let userId = try auth.user(caller, named: try WalletRoutes.userId(context)) ?? ""
      var fields = try RequestFields(request: request)
      fields.rejectUnknown(allowed: ["consented"])
      let consented = fields.bool("consented")
      if !fields.has("consented") { fields.fail("consented", "is required") }
      try fields.validate()
      guard let consented else { throw HTTPError(422, code: "validation_failed") }
      let consent = try await answers.setConsent(
        userId: userId, consented: consented, caller: WalletRoutes.name(caller))
      context.logger.info(
        "consumption consent recorded",
        ["user_id": .string(userId), "consented": .bool(consented)])
      return try JSONCoding.response(consent)
    }
  }
}
