import GooglePlay
import StorekeeperLogging

/// `POST /v1/google/notifications`' domain side: the push's OIDC token is checked first
/// (audience, issuer, the push service account's verified email, a signature by Google's
/// JWKS), then the body is read and stored by `messageId`. Any Google principal can mint a
/// token for any audience, so the email is what makes a push Google Play's. The two steps are
/// two calls, so the edge can refuse an unauthenticated caller before it judges the body (its
/// size, its media type); `store` takes the proof that `authenticate` passed.
package struct GooglePushReceiver: Sendable {
  let verifier: PushTokenVerifier?
  let service: GoogleNotificationService
  let logger: Logger

  package init(
    verifier: PushTokenVerifier?, service: GoogleNotificationService, logger: Logger
  ) {
    self.verifier = verifier
    self.service = service
    self.logger = logger
  }

  package static let maxBodyBytes = PubSubPushDecoder.maxBodyBytes

  /// That a push's token was checked; only `authenticate` makes one.
  package struct Authenticated: Sendable {
    fileprivate init() {}
  }

  /// Checks the `Authorization` header's OIDC token; nothing of the body is looked at.
  package func authenticate(authorization: String?) async throws -> Authenticated {
    guard let verifier else { throw GooglePushRefusal.notConfigured }
    do {
      _ = try await verifier.verify(authorization: authorization)
    } catch {
      logger.warning("Google push refused", ["reason": .string("\(error)")])
      throw error.isServerSide ? GooglePushRefusal.keysUnavailable : .unauthenticated
    }
    return Authenticated()
  }

  /// Reads and stores an authenticated push; false when it is a redelivery of one stored
  /// before.
  package func store(_ body: [UInt8], _: Authenticated) async throws -> Bool {
    let push: PubSubPush
    do {
      push = try PubSubPushDecoder.decode(body)
    } catch {
      logger.warning("Google push unreadable", ["reason": .string(error.description)])
      throw GooglePushRefusal.malformed(error.description)
    }
    let stored = try await service.receive(push)
    logger.info(
      stored ? "Google push stored" : "Google push redelivered",
      [
        "message_id": .string(push.messageId),
        "package_name": .string(push.notification.packageName),
      ])
    return stored
  }
}
