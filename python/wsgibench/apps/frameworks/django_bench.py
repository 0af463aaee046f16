"""Django (WSGI `django_bench:application`, ASGI `django_bench:asgi_application`), configured here.

settings.configure(...) in this module: DEBUG off, every host allowed, one middleware (CommonMiddleware,
as Django's project template has it: it sets Content-Length, without which uWSGI's HTTP/1.1 socket
holds the reply until its socket timeout), no installed apps, no database backend, this module as
ROOT_URLCONF. Views are plain functions behind Django's
method decorators; /json and /db are JsonResponse (DjangoJSONEncoder: json.dumps's `", "` and
`": "` separators). Kept from Django's defaults: its 404, 405 and 400 replies (a body over
DATA_UPLOAD_MAX_MEMORY_SIZE, set here to ECHO_MAX, is a 400). With DEBUG off Django prints no
request log. Under ASGI each request's sync view runs in a thread of its own (asgiref's
ThreadSensitiveContext per request).
"""

from django.conf import settings
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application
from django.http import HttpResponse, JsonResponse
from django.urls import path
from django.views.decorators.http import require_GET, require_POST
from fwdata import ECHO_MAX, HELLO, rows

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["*"],
    ROOT_URLCONF=__name__,
    MIDDLEWARE=["django.middleware.common.CommonMiddleware"],
    INSTALLED_APPS=[],
    DATABASES={},
    DATA_UPLOAD_MAX_MEMORY_SIZE=ECHO_MAX,
)


@require_GET
def ping(request):
    return HttpResponse("Pong!", content_type="text/plain")


@require_GET
def plaintext(request):
    return HttpResponse(HELLO, content_type="text/plain")


@require_GET
def json_message(request):
    return JsonResponse({"message": HELLO})


@require_GET
def db(request):
    return JsonResponse({"rows": rows()})


@require_POST
def echo(request):
    return HttpResponse(request.body, content_type="application/octet-stream")


urlpatterns = [
    path("ping", ping),
    path("plaintext", plaintext),
    path("json", json_message),
    path("db", db),
    path("echo", echo),
]

application = get_wsgi_application()
asgi_application = get_asgi_application()
