"""The routes of customer sign-in (interface 4.1, 4.3-4.6): one endpoint module each, and
``rendering`` turns every error they raise into its response."""

from __future__ import annotations

from starlette.routing import BaseRoute, Route

from frontdesk.oauth.authorize import Authorize
from frontdesk.oauth.callback import Callback
from frontdesk.oauth.consent import ConsentAndLogin
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.jwks import PublishedKeys
from frontdesk.oauth.metadata import Discovery
from frontdesk.oauth.register import Registration
from frontdesk.oauth.revoke import Revoke
from frontdesk.oauth.token import Token


def oauth_routes(services: OAuthServices) -> list[BaseRoute]:
    discovery = Discovery(services)
    steps = ConsentAndLogin(services)
    # The token endpoint first: every refresh is routed, and the router tries each route's
    # pattern in turn.
    return [
        Route("/v1/{tenant}/oauth/token", Token(services).token, methods=["POST"]),
        *(
            Route(path, discovery.server_metadata, methods=["GET"])
            for path in Discovery.ISSUER_PATHS
        ),
        Route(Discovery.RESOURCE_PATH, discovery.resource_metadata, methods=["GET"]),
        Route("/v1/{tenant}/oauth/jwks.json", PublishedKeys(services).jwks, methods=["GET"]),
        Route("/v1/{tenant}/oauth/register", Registration(services).register, methods=["POST"]),
        Route("/v1/{tenant}/oauth/authorize", Authorize(services).authorize, methods=["GET"]),
        Route("/v1/{tenant}/oauth/consent", steps.consent, methods=["POST"]),
        Route("/v1/{tenant}/oauth/login", steps.login_form, methods=["GET"]),
        Route("/v1/{tenant}/oauth/login", steps.login_submit, methods=["POST"]),
        Route("/v1/{tenant}/oauth/callback", Callback(services).callback, methods=["GET"]),
        Route("/v1/{tenant}/oauth/revoke", Revoke(services).revoke, methods=["POST"]),
    ]
