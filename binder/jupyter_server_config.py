# The course's Jupyter server settings, so that a learner's whole session fits Binder's
# 2 GB (binder/postBuild installs this file; classroom/jupyterhub_config.py passes it to
# every student's server). A kernel that has imported torch holds 300-470 MB, and a learner
# who opens the notebooks one after another leaves every earlier kernel running: by
# notebook 08 they add up to about 2 GB and the kernel that is killed is one the learner
# has already left. So:
# - at most MAX_KERNELS kernels run: starting another one first shuts down the kernel
#   that has been idle longest (never a busy one);
# - a kernel idle for CULL_MINUTES is shut down even if its tab is still open;
# - JupyterLab shuts a notebook's kernel down when its tab is closed (binder/overrides.json).
# Notebook 00 tells the learner what this means for them. benchmarks/binder_session.py
# measures a whole session under a 2 GB memory limit.
import os

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

MAX_KERNELS = int(os.environ.get("COURSE_MAX_KERNELS", "3"))
CULL_MINUTES = 20


class CourseKernelManager(AsyncMappingKernelManager):
    """Keeps at most MAX_KERNELS kernels: the longest-idle one makes room for a new one."""

    async def start_kernel(self, *, kernel_id=None, path=None, **kwargs):
        if kernel_id is None or kernel_id not in self:
            idle = sorted((kernel.last_activity, name) for name, kernel in self._kernels.items()
                          if getattr(kernel, "execution_state", "") == "idle")
            for _, name in idle[:max(0, len(self._kernels) - MAX_KERNELS + 1)]:
                self.log.info("Shutting down the longest-idle kernel %s to make room (at most %d run)",
                              name, MAX_KERNELS)
                await self.shutdown_kernel(name)
        return await super().start_kernel(kernel_id=kernel_id, path=path, **kwargs)


c = get_config()  # noqa: F821
c.ServerApp.kernel_manager_class = CourseKernelManager
c.MappingKernelManager.cull_idle_timeout = CULL_MINUTES * 60
c.MappingKernelManager.cull_interval = 60
c.MappingKernelManager.cull_connected = True  # a tab left open keeps its connection
c.MappingKernelManager.cull_busy = False  # never a kernel that is computing
# nbgrader is installed beside the course for the teacher (make nbgrader, on the command line);
# its server extensions, like its JupyterLab menus (binder/page_config.json), are not for students.
c.ServerApp.jpserver_extensions = {f"nbgrader.server_extensions.{name}": False
                                   for name in ("formgrader", "validate_assignment", "assignment_list", "course_list")}
# No "Would you like to receive official Jupyter news?" pop-up and no update check.
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.handlers.announcements.NeverCheckForUpdate"
