from .models import User
