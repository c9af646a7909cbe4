"""Datasets: the synthetic default (:func:`make_biometric`) and loaders for real sets.

Real sets are read from the data home (``$BIOANON_DATA``, default ``~/bioanon_data``):
:func:`load_fsdd` (voice), :func:`load_yale_faces` (faces), :func:`load_sp_sw_har` (motion);
and the generic forms any owner has: :func:`load_image_folder`, :func:`load_wav_folder`,
:func:`load_sensor_csv`.
"""

from .folders import load_image_folder, load_sensor_csv, load_wav_folder
from .fsdd import load_fsdd
from .home import data_home
from .sp_sw_har import load_sp_sw_har
from .synthetic import make_biometric
from .yale_faces import load_yale_faces

__all__ = ["data_home", "load_fsdd", "load_image_folder", "load_sensor_csv", "load_sp_sw_har",
           "load_wav_folder", "load_yale_faces", "make_biometric"]
