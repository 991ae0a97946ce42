"""Calls the App Store Server API with Apple's own client (PyPI `app-store-server-library`'s
`AppStoreServerAPIClient`), for tests/e2e/test_apple_additions.py: the fake App Store must serve
what Apple's library sends, as Apple does. Runs under APPLE_LIBRARY_PYTHON, like
apple_library_verifier.py. Only the base URL is changed (to the fake's), since the library
knows Apple's hosts only.

stdin: {"base_url", "key_pem", "key_id", "issuer_id", "bundle_id", "environment",
"calls": [{"original_transaction_id", "app_account_token"}]}. stdout: one answer per call:
{"status": 200} or {"status": <HTTP status>, "error_code": <Apple's errorCode or null>}.
"""

from __future__ import annotations

import json
import sys

from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest


def main() -> None:
    request = json.load(sys.stdin)
    client = AppStoreServerAPIClient(
        request["key_pem"].encode(), request["key_id"], request["issuer_id"], request["bundle_id"],
        Environment(request["environment"]))
    client._base_url = request["base_url"]
    answers = []
    for call in request["calls"]:
        try:
            client.set_app_account_token(
                call["original_transaction_id"],
                UpdateAppAccountTokenRequest(appAccountToken=call["app_account_token"]))
            answers.append({"status": 200})
        except APIException as e:
            answers.append({"status": e.http_status_code, "error_code": e.raw_api_error})
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
