// report.js - the script of report.html (embedded in the page by
// report_html.c through harness/embed.sh: no network, no external file).
// Builds the story list, draws the timelines from the page's JSON data (one
// block of lanes per run, every block on one time axis) and steps through
// them. Text from the data goes in as text (textContent), never as markup,
// except the story's own <b>, restored after escaping.
// lbPage(D, deck): one page of runs (D.runs); a tour's deck (below) calls it
// again for each lesson, with @deck to go on to the next lesson past the last step
function lbPage(D,deck){
var RS=D.runs,multi=RS.length>1;
// the classroom view (a tour's deck): one run at a time, in the order given,
// its set-up told as one step, the lesson's question first; the timeline is
// drawn up to the step shown (predict, then reveal)
var CL=!!(deck&&D.question);
var ol=document.getElementById('story'),all=[];
RS.forEach(function(r,ri){r.faults.forEach(function(e){all.push([e[0],'fault',e[4],ri]);});
 r.steps.forEach(function(s){all.push([s[0],s[1],s[2],ri]);});});
all.sort(function(a,b){return a[0]-b[0]||(a[1]==='fault'?-1:1)*(a[1]!==b[1])||a[3]-b[3];});
// a compare page: moments of several runs in the same millisecond (as the
// page shows times) are told in the order the strategies were given
if(multi)all.forEach(function(s,k){s[4]=k;});
if(multi&&!CL)all.sort(function(a,b){return Math.round(a[0]*1000)-Math.round(b[0]*1000)||a[3]-b[3]||a[4]-b[4];});
if(CL)all=classSteps(all);
function classSteps(v){var out=[[0,'question',D.question,0,-1]];
 RS.forEach(function(r,ri){var mine=v.filter(function(s){return s[3]===ri;}),k=0,set=[];
  mine.sort(function(a,b){return a[0]-b[0]||a[4]-b[4];});
  // set-up: the faults at the run's start (the first 10 ms), one step
  while(k<mine.length&&mine[k][1]==='fault'&&mine[k][0]<=0.01)set.push(mine[k++]);
  if(set.length>1)out.push([set[set.length-1][0],'fault setup',set.map(function(s){return s[2].replace(/^Set-up: /,'');}).join(' '),ri,-1,set[0][0]]);
  else if(set.length)out.push(set[0]);
  // a run with nothing to tell (no fault, no incident) is still shown, whole
  if(!mine.length)out.push([r.end,'story','<b>'+r.end.toFixed(3)+' s: the whole run.</b> Nothing in it that the steps tell: no fault, no incident.',ri,-1]);
  out=out.concat(mine.slice(k));});
 return out;}
all.forEach(function(s){var li=document.createElement('li');li.dataset.t=s[0];li.dataset.run=s[3];
 li.className=s[1];if(multi&&s[1]!=='question'){var rb=document.createElement('span');rb.className='run';
 rb.textContent=RS[s[3]].label;li.appendChild(rb);}
 if(s[1].indexOf('fault')===0){var b=document.createElement('b');b.textContent=(s[5]!==undefined?'Set-up, '+s[5].toFixed(3)+' to ':'')+s[0].toFixed(3)+' s: ';li.appendChild(b);}
 if(s[1]==='question'){var q=document.createElement('b');q.textContent='Predict: ';li.appendChild(q);}
 var span=document.createElement('span');span.innerHTML=s[2].replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/&lt;(\/?)b>/g,'<$1b>');li.appendChild(span);ol.appendChild(li);});
var NS='http://www.w3.org/2000/svg',svg=document.getElementById('tl');
var L=150,R=30,T=20,LANE=multi?38:56,NLANE=multi?26:34,W=1400,HEAD=multi?40:0,end=0,top=T;
RS.forEach(function(r){if(r.names)r.names.forEach(function(n){L=Math.max(L,Math.min(330,n.length*9+24));});});
var L0=L;
// the axis: the whole run, or a window around the step (zoom); the SVG's
// width is 1400 units over the chart scale (--chart-scale), so that type and
// marks grow with it; presenter mode makes them larger still
var SC=D.scale>0?D.scale:1,W0=W,A0=0,A1=1,zoom=false,present=false,plot=null,cur=null,FS=18;
// the classroom view draws one unit to a pixel (times the chart scale, and
// 1.25 in presenter mode): no text under 18 units, marks 1.4 times larger;
// U: drawn up to this moment (the step shown), focus: the run shown
var MK=CL?1.4:1,U=Infinity,focus=0,allRuns=false;
function fs(n){return CL?Math.max(18,n):n;}
// the colours: PAL, defined before this script by report_html.c from
// harness/core/palette.h (tested apart for colour-blind viewers: test_palette.c)
var COL=PAL.clients;
// Redis holds: a lane per server that held the lock key (r.redis, from
// keyevents.csv: report_lane.c), under the clients' (and Redlock's node)
// lanes. A span is [from, to, owner, ttl ms]: owner a client, -1 a value no
// client entered with, -2 a value not read, -3 not known what the server
// holds (it restarted, was lost, promoted or demoted); ttl -1 none, null not
// read. The bar is in the owner's colour, hatched with "no TTL" when the key
// has none, pale from where its TTL ran out until Redis removed it.
// (lanes of several servers are taller: a line under the name says since when)
function rlane(r){return NLANE+(r.redis.length>1?(CL?22:14):0);}
function redisRoom(r){return r.redis&&r.redis.length?30+rlane(r)*r.redis.length:0;}
function ry(r,k){return r.low-redisRoom(r)+30+rlane(r)*k+rlane(r)/2;}
function redisName(r,k){return r.redis.length>1?'port '+r.redis[k].port:'lock key';}
function redisHatch(){if(document.getElementById('nottl'))return;
 var d=el('defs',{}),p=document.createElementNS(NS,'pattern');
 [['id','nottl'],['width',8],['height',8],['patternUnits','userSpaceOnUse'],['patternTransform','rotate(45)']].forEach(function(a){p.setAttribute(a[0],a[1]);});
 var l=document.createElementNS(NS,'rect');l.setAttribute('width',3);l.setAttribute('height',8);l.setAttribute('fill','#fff');l.setAttribute('fill-opacity','0.75');
 p.appendChild(l);d.appendChild(p);}
function drawRedis(r){if(!r.redis||!r.redis.length||r.hide)return;redisHatch();
 var base=r.low-redisRoom(r);
 el('text',{x:L-12,y:base+22,'text-anchor':'end','font-size':fs(16),fill:'#555','class':'redis'},'Redis holds:');
 r.redis.forEach(function(v,k){var Y=ry(r,k);
  el('text',{x:L-12,y:Y+6,'text-anchor':'end','font-size':18,'class':'redis'},redisName(r,k));
  // a server whose events begin later became a primary then (only a primary's are kept)
  if(r.redis.length>1&&v.from>0.05)el('text',{x:L-12,y:Y+(CL?26:22),'text-anchor':'end','font-size':fs(12),fill:'#555','class':'redis'},'primary from '+v.from.toFixed(3)+' s');
  el('line',{x1:L,x2:W-R,y1:Y,y2:Y,stroke:'#eee'});
  redisGroups(v.spans).forEach(function(g){if(g.from>U)return;var a=x(g.from),b=Math.max(a+1.5,x(Math.min(g.to,U))),c=g.owner>=0?COL[g.owner%8]:'#999';
   if(g.owner===-3){el('line',{x1:a,x2:b,y1:Y,y2:Y,stroke:'#999','stroke-dasharray':'2 4','stroke-width':3,'class':'redis-span'});return;}
   var d=g.ttl!==null&&g.ttl>=0&&g.at+g.ttl/1000<=U?x(g.at+g.ttl/1000):null,solid=d!==null&&d<b?Math.max(a,d):b;
   el('rect',{x:a,y:Y-8,width:Math.max(1.5,solid-a),height:16,fill:c,'class':'redis-span'});
   if(solid<b){el('rect',{x:solid,y:Y-8,width:b-solid,height:16,fill:c,'fill-opacity':0.3});
    el('line',{x1:solid,x2:solid,y1:Y-11,y2:Y+11,stroke:'#000','stroke-width':2});}
   if(g.ttl===-1)el('rect',{x:a,y:Y-8,width:b-a,height:16,fill:'url(#nottl)'});
   var tt=g.ttl===-1?'no TTL':g.ttl!==null?'TTL '+g.first+' ms'+(g.rearm?', re-armed '+g.rearm+(g.rearm>1?' times':' time'):''):'';
   // its owner written on it (cN), where it fits: the colour is not the only cue
   var own=g.owner>=0?'c'+g.owner:'',lbl=[own,tt].filter(Boolean).join(', ');
   var va=Math.max(a,L),vb=Math.min(b,W-R); /* the part in the window (zoom) */
   function fits(t){return t&&vb-va>t.length*fs(13)*0.62+8;}
   if(!fits(lbl))lbl=fits(own)?own:fits(tt)?tt:'';
   if(lbl)el('text',{x:(va+vb)/2,y:Y+5,'text-anchor':'middle','font-size':fs(13),'font-weight':600,fill:'#000',stroke:'#fff','stroke-width':3,'paint-order':'stroke','class':'redis'},lbl);});});
 if(!r.NL)for(var c=0;c<r.clients;c++)el('rect',{x:L-140,y:y(r,c)-6,width:12,height:12,fill:COL[c%8]});
 var key=document.querySelector('p.keys');if(key&&!key.dataset.redis){key.dataset.redis=1;
  key.appendChild(document.createTextNode(' Redis holds: the lock key on the server, as the server itself reported each change of it, in the colour of the client whose acquire wrote its value (grey: a value no client entered with, or not read); hatched and marked "no TTL" when the key has no TTL; pale from where its TTL ran out until Redis removed it; dotted where what the server holds is not known (a restart, a promotion, a demotion).'));}}
// the spans drawn as one bar: back to back, one owner, a TTL or none
// throughout (a span whose TTL was not read joins its neighbours); the TTL
// is the last one read (at: when), first the first, rearm how many times an
// expire set it again
function redisGroups(spans){var out=[],g=null;
 spans.forEach(function(s){var kind=s[3]===null?null:s[3]===-1;
  if(g&&Math.abs(g.to-s[0])<1e-9&&g.owner===s[2]&&(kind===null||g.kind===null||kind===g.kind)){g.to=s[1];
   if(kind!==null){if(g.kind===null)g.first=s[3];else g.rearm+=kind===false;g.kind=kind;g.ttl=s[3];g.at=s[0];}return;}
  g={from:s[0],to:s[1],owner:s[2],kind:kind,ttl:s[3],at:s[0],first:s[3],rearm:0};out.push(g);});
 return out;}
function dead(r,c,t){var d=false;r.faults.forEach(function(f){if(f[0]<=t&&f[2]===c&&(f[1]==='kill'||f[1]==='crash'))d=true;});return d;}

// what Redis holds at @t, for the who box: one line per lane. The watcher
// stamps a change when its notification arrives, a fraction of a ms to a few
// ms after the server made it, while a step is stamped by a client once it
// had the server's reply (an enter; a crash right after SETNX): when what the
// server reported changes within 2 ms after the step, the box says both.
function redisAt(r,v,tt,t){var s=null;
 v.spans.forEach(function(q){if(q[0]<=tt&&(tt<q[1]||q[1]>=r.end))s=q;}); // what it held at the run's end, after it
 if(!s)return tt<v.from?'not yet seen as a primary':'no lock key';
 if(s[2]===-3)return 'not known (the watcher lost this server, or has not read it since: a kill, a restart, a promotion or a demotion)';
 var w='lock key held '+(s[2]>=0?'by '+lane(r,s[2])+"'s token":s[2]===-1?'with a value no client entered with (no owner)':'by an unknown owner (its value could not be read)');
 if(s[3]===-1)w+=', no TTL';
 else if(s[3]===null)w+=', TTL not read';
 else{var d=s[0]+s[3]/1000,left=Math.round((d-t)*1000);w+=left>0?', TTL '+left+' ms left':', but its TTL ran out at '+d.toFixed(3)+' s: to any client that asks it is gone (Redis removes it then)';}
 if(s[2]>=0&&dead(r,s[2],tt))w+=' ('+lane(r,s[2])+' is dead)';
 return w;}
function redisWho(r,t,pre,inside){if(!r.redis||!r.redis.length)return [];
 var out=!multi&&!inside?['no client is in its critical section']:[];
 r.redis.forEach(function(v,k){var who=pre+'Redis'+(r.redis.length>1?' ('+redisName(r,k)+')':'')+': ';
  var now=redisAt(r,v,t,t),soon=null,at=t;
  // the first change reported within 2 ms after the step
  v.spans.forEach(function(q){if(soon===null&&q[0]>t&&q[0]<=t+0.002){at=q[0];soon=redisAt(r,v,q[0],q[0]);}});
  if(soon===null)v.spans.forEach(function(q){if(soon===null&&q[1]>t&&q[1]<=t+0.002&&q[1]<r.end){at=q[1];soon=redisAt(r,v,q[1]+1e-9,q[1]);}});
  out.push(who+now+(soon!==null&&soon!==now?'; '+((at-t)*1000).toFixed(1)+' ms later, as the server reported it: '+soon:''));});
 return out;}
// Redlock: a lane per lock node under the clients' lanes, showing which
// client holds the lock there, and when a restart wiped it
RS.forEach(function(r){end=Math.max(end,r.end);r.NL=r.sec.some(function(s){return s[6]>0;})?r.nodes:0;r.lab={h:0,rows:[]};});
end=end||1;var H,H0;A1=end;
// the blocks of the runs shown, one under the other (their label rows aside)
function stack(){var top=T;RS.forEach(function(r,ri){r.hide=CL&&!allRuns&&ri!==focus;if(r.hide)return;
 r.top0=top+HEAD;r.low0=r.top0+LANE*r.clients+(r.NL?30+NLANE*r.NL:0)+redisRoom(r);top=r.low0+(multi?12:0);});H0=H=top+50;}
stack();
// the classroom view: a unit a pixel (over the chart scale; presenter mode
// 1.25 times larger), the lanes as tall as the screen leaves room for under
// the step's sentence, from the lesson bar (presenter mode: the buttons) down
function size(){var k=SC*(present?1.25:1),px=svg.getBoundingClientRect().width||W0,print=deck.whole!==undefined;W=print?1500:Math.round(px/k);
 // the names left of the lanes at 18 units and more: as wide as the widest
 L=L0;RS.forEach(function(r){if(r.redis&&r.redis.length>1)L=Math.max(L,textWidth('primary from 0.000 s',18)+24);});
 LANE=multi?38:56;NLANE=multi?26:34;stack();var lab=0,lanes=0;
 RS.forEach(function(r){if(r.hide)return;lab+=layout(r).h;lanes+=LANE*r.clients+(r.NL?NLANE*r.NL:0)+(r.redis&&r.redis.length?rlane(r)*r.redis.length:0);});
 var top=document.getElementById(present?'pin':'lessonbar').getBoundingClientRect().top;
 var room=(innerHeight-(svg.getBoundingClientRect().top-top)-8)/k-(H0+lab-lanes);
 if(print)room=760-(H0+lab-lanes);
 var f=print?Math.max(1,Math.min(3,room/lanes)):Math.max(30/LANE,Math.min(present?2:1.4,room/lanes));LANE*=f;NLANE=Math.max(24,NLANE*f);stack();}
function restartOf(r,n,a,b){var v=null;r.faults.forEach(function(f){if(v===null&&f[1]==='node-start'&&f[3]===n&&f[0]>=a&&f[0]<=b)v=f[0];});return v;}
function holds(s){var v=[];for(var n=0;n<32;n++)if(s[6]>>n&1)v.push(n);return v;}
// an imported history names its lanes: "2: worker-b"
function lane(r,c){return r.names&&r.names[c]?r.names[c]:'client '+c;}
function x(t){return Math.max(L-30,Math.min(W-R+30,L+(W-L-R)*(t-A0)/(A1-A0)));}
function y(r,c){return r.top+LANE*(r.clients-1-c)+LANE/2;}
function ny(r,n){return r.top+LANE*r.clients+30+NLANE*n+NLANE/2;}
function el(n,a,txt){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);if(txt!==undefined)e.textContent=txt;pick(n,a).appendChild(e);return e;}
// Drawing is a function of the axis (A0..A1): frame() sizes the page for
// the fault labels the window shows, clips the plot, and draws into it; what
// lies left of the plot (lane names, a block's name, the key squares: text
// left of L, anything further left, a line from x=0) is drawn outside the
// clip, everything else inside it, so that a zoomed axis cuts what lies
// outside the window.
function pick(n,a){return !plot||(n==='text'?a.x<L:a.x<L-40)||a.x1===0?svg:plot;}
var QUIET={'server-down':1,'server-back':1,'hook-end':1},ROWH=FS+8;
function faultName(f){return f[1]+(f[2]>=0?' c'+f[2]:f[3]>=0?' n'+f[3]:'');}
function textWidth(s,size,bold){var k=size+(bold?'b':'')+s;if(textWidth[k])return textWidth[k];
 var m=el('text',{x:-9999,y:-9999,'font-size':size,'font-weight':bold?'bold':'normal'},s),w=m.getComputedTextLength();svg.removeChild(m);return w?(textWidth[k]=w):s.length*size*0.62;}
// The fault labels of @r in the window: horizontal, each beside its fault's
// line (or ending at it, near the right edge), in the first row where it
// clears the labels already placed; a row is added when none has room.
function layout(r){var rows=[],out=[];r.faults.forEach(function(f){if(QUIET[f[1]]||f[0]<A0||f[0]>A1||f[0]>U)return;
 var X=x(f[0]),s=faultName(f),w=textWidth(s,FS),a=X+3;if(a+w>W-4)a=X-3-w;if(a<L-8)a=L-8;
 for(var k=0;k<rows.length&&rows[k]>a-10;k++);rows[k]=a+w;out.push({X:X,a:a,w:w,k:k,s:s});});
 return {h:rows.length*ROWH+(rows.length?6:0),n:rows.length,rows:out};}
// each label in its row above the lanes, a leader from it down to the lanes
function labels(r){var lb=r.lab,top=r.top-lb.h;lb.rows.forEach(function(o){var Y=top+o.k*ROWH+FS;
 el('line',{x1:o.X,x2:o.X,y1:Y+4,y2:r.top,stroke:'#999','stroke-width':1});
 fixed('text',{x:o.a,y:Y,'font-size':FS,fill:'#444',stroke:'#fff','stroke-width':4,'paint-order':'stroke',class:'fault-label'},o.s);});}
function fixed(n,a,txt){var p=plot;plot=null;var e=el(n,a,txt);plot=p;return e;}
// a block of a compare page names what its run observed (its class)
function outcome(r){if(!r.observed||U<Infinity)return;fixed('text',{x:8+textWidth(r.label,24,true)+14,y:r.top-r.lab.h-12,'font-size':20,fill:'#444',class:'outcome'},'observed: '+r.observed);}
// the page's frame for the window: label rows, heights, viewBox, clip
function frame(){svg.textContent='';plot=null;var sh=0;
 if(CL)size();else W=Math.round(W0/SC/(present?1.35:1));
 RS.forEach(function(r){if(r.hide)return;r.top=r.top0+sh;r.low=r.low0+sh;r.lab=layout(r);sh+=r.lab.h;r.top+=r.lab.h;r.low+=r.lab.h;});
 H=H0+sh;svg.setAttribute('viewBox','0 0 '+W+' '+H);
 var cp=el('clipPath',{id:'plotclip'});cp.appendChild(document.createElementNS(NS,'rect'));
 cp.firstChild.setAttribute('x',L-3);cp.firstChild.setAttribute('y',-1000);cp.firstChild.setAttribute('width',W-R-L+6);cp.firstChild.setAttribute('height',100000);
 plot=el('g',{'clip-path':'url(#plotclip)'});}
// ticks: 1, 2 or 5 times a power of ten, as many as fit their labels; in
// seconds on the whole run, in ms on a window
function ticks(){var span=A1-A0,ms=(A0>0||A1<end)&&span<2,px=(W-L-R)/span,step=0,at=[];
 var fmt=function(t){return ms?(+(t*1000).toFixed(3))+' ms':(+t.toFixed(3))+' s';};
 for(var p=Math.pow(10,Math.floor(Math.log10(span))-2);!step&&p<1e9;p*=10)[1,2,5].forEach(function(m){if(step)return;
  if(span/(m*p)>(W-L-R)/40)return; /* no label is narrower than 40 units */
  var wide=0,v=[];for(var i=Math.ceil(A0/(m*p)-1e-9);i*m*p<=A1+1e-9;i++){v.push(i*m*p);wide=Math.max(wide,textWidth(fmt(i*m*p),20));}
  if(m*p*px>=wide+24){step=m*p;at=v;}});
 at.forEach(function(t){var X=x(t),hw=textWidth(fmt(t),20)/2;el('line',{x1:X,x2:X,y1:T,y2:H-40,stroke:'#ddd'});
  fixed('text',{x:X+hw>W?W:X,y:H-14,'text-anchor':X+hw>W?'end':'middle','font-size':20,class:'tick'},fmt(t));});}
// the window around time @t: from the nearest other step (any run), twice
// that on each side (2 ms at least), so that the moment and its neighbour
// fill the screen; the whole run when that is most of it
function win(t){var g=Infinity;all.forEach(function(s){var d=Math.abs(s[0]-t);if(d>1e-6&&d<g)g=d;});
 var d=Math.max(0.002,2*g);if(2*d>=end*0.6)return [0,end];
 var a=t-d,b=t+d;if(a<0){b-=a;a=0;}if(b>end){a=Math.max(0,a-(b-end));b=end;}return [a,b];}
// every pair of sections of two clients on one lock inside at once, as
// (s, o, from, to): swept in order of entry, each against those still inside
function overlapping(sec,each){var ix=sec.map(function(s,k){return k;}),open=[];
 ix.sort(function(a,b){return sec[a][1]-sec[b][1]||a-b;});
 ix.forEach(function(k){var s=sec[k];open=open.filter(function(o){return o[2]>s[1];});
  open.forEach(function(o){if(o[0]===s[0]||o[5]!==s[5])return;var a=Math.max(s[1],o[1]),b=Math.min(s[2],o[2]);if(b>a)each(s,o,a,b);});
  open.push(s);});}
// A large run (r.agg, report_stretch.c): each lane is drawn as stretches of
// the run, its bins [bin, sections entered, us inside, us while two or more
// were inside] run together while they look alike: blue, darker the more of
// the stretch the client was inside; red where two or more were inside at
// once. The sections kept one by one (around each step, and those of an
// incident) are drawn over them; in the windows where every section is kept
// (r.agg.full) no stretch is drawn. A click on a stretch zooms to it and
// says what it holds.
function stretchesOf(r){var g=r.agg,out=[];g.lanes.forEach(function(v,c){var st=null;
 for(var k=0;k<v.length;k+=4){var b=v[k],a0=b*g.w,a1=Math.min(g.end,(b+1)*g.w);if(a1<A0||a0>A1)continue;
  var f=Math.min(1,v[k+2]/1e6/(a1-a0)),red=v[k+3]>0;
  if(st&&st.b1===b&&st.red===red&&(red||Math.abs(f-st.f0)<0.1)){st.b1=b+1;st.to=a1;st.n+=v[k+1];st.busy+=v[k+2];st.ovl+=v[k+3];continue;}
  st={c:c,b1:b+1,from:a0,to:a1,n:v[k+1],busy:v[k+2],ovl:v[k+3],f0:f,red:red};out.push(st);}});
 return out;}
function drawStretches(r){stretchesOf(r).forEach(function(s){var f=Math.min(1,s.busy/1e6/(s.to-s.from)),pieces=[[s.from,s.to]];
 r.agg.full.forEach(function(w){var nx=[];pieces.forEach(function(p){if(w[1]<=p[0]||w[0]>=p[1]){nx.push(p);return;}
  if(w[0]>p[0])nx.push([p[0],w[0]]);if(w[1]<p[1])nx.push([w[1],p[1]]);});pieces=nx;});
 // (a wide red stretch: shaded blue with a red band, the overlap being somewhere in it)
 pieces.forEach(function(p){var a=x(p[0]),b=x(p[1]),band=s.red&&b-a>8,e=el('rect',{x:a,y:y(r,s.c)-9,width:Math.max(s.red?3:1.5,b-a),height:18,
  fill:s.red&&!band?PAL.overlap:PAL.inside,'fill-opacity':s.red&&!band?1:(0.3+0.7*f).toFixed(2),'class':s.red?'stretch stretch-overlap':'stretch',style:'cursor:pointer'});
  if(band)el('rect',{x:a,y:y(r,s.c)-3,width:b-a,height:6,fill:PAL.overlap,'pointer-events':'none'});
  var tt=document.createElementNS(NS,'title');tt.textContent=stretchText(r,s);e.appendChild(tt);
  e.addEventListener('click',function(){stretchZoom(r,s);});});});
 var key=document.querySelector('p.keys');if(key&&!key.dataset.agg){key.dataset.agg=1;
  key.appendChild(document.createTextNode(' This run has '+r.agg.n.toLocaleString('en')+' sections, more than the page draws one at a time ('+r.agg.max.toLocaleString('en')+
   '): each lane is drawn as stretches, blue, darker the more of the stretch its client was inside, red where two or more were inside at once (a wide stretch: a red band through it, the overlap somewhere in it); drawn one by one over them are every section around each step (zoomed, a step shows each section there) and those of an overlap, a foreign release, a death or a lost lease (up to '+r.agg.keep.toLocaleString('en')+
   ', '+r.agg.kept.toLocaleString('en')+' here). Click a stretch to zoom to it and see what it holds; history.csv holds every section.'));}}
function stretchText(r,s){var f=s.busy/1e6/(s.to-s.from);
 return lane(r,s.c)+' from '+s.from.toFixed(3)+' s to '+s.to.toFixed(3)+' s: '+s.n.toLocaleString('en')+' section'+(s.n===1?'':'s')+' entered, inside '+(100*f).toFixed(1)+'% of the time'+
  (s.ovl>0?', two or more inside at once for '+(s.ovl/1000).toFixed(3)+' ms of it':'')+'.';}
function stretchZoom(r,s){var m=(s.to-s.from)*0.05;A0=Math.max(0,s.from-m);A1=Math.min(end,s.to+m);drawn='stretch';draw();
 var t=+items[i].dataset.t;cur.setAttribute('x1',x(t));cur.setAttribute('x2',x(t));document.getElementById('zoom').textContent='whole run';
 var d=document.getElementById('stretch');if(!d){d=document.createElement('div');d.id='stretch';svg.parentNode.insertBefore(d,svg.nextSibling);}
 d.textContent='';var h=document.createElement('b');h.textContent=stretchText(r,s);d.appendChild(h);
 var one=r.sec.filter(function(q){return q[0]===s.c&&q[2]>s.from&&q[1]<s.to;});
 d.appendChild(document.createTextNode(' '+(one.length?'Drawn one by one in it: '+one.length+(one.length>12?' (the first 12 listed)':'')+'. ':'None of them is drawn one by one here (no step, no incident): history.csv holds each. ')+
  'z or \u201cwhole run\u201d goes back.'));
 if(one.length){var ul=document.createElement('ul');one.slice(0,12).forEach(function(q){var li=document.createElement('li');
  li.textContent='inside from '+q[1].toFixed(6)+' s to '+q[2].toFixed(6)+' s ('+q[4]+')';ul.appendChild(li);});d.appendChild(ul);}}
function draw(){frame();ticks();var sd=document.getElementById('stretch');if(sd&&drawn!=='stretch')sd.parentNode.removeChild(sd);
RS.forEach(function(r,ri){if(r.hide)return;
 if(multi){if(ri&&!CL)el('line',{x1:0,x2:W,y1:r.top-HEAD-r.lab.h+2,y2:r.top-HEAD-r.lab.h+2,stroke:'#888','stroke-width':2});
  el('text',{x:8,y:r.top-r.lab.h-12,'font-size':24,'font-weight':'bold',fill:'#222'},r.label);outcome(r);}
 for(var c=0;c<r.clients;c++){el('text',{x:L-12,y:y(r,c)+7,'text-anchor':'end','font-size':r.names?16:22},lane(r,c));el('line',{x1:L,x2:W-R,y1:y(r,c),y2:y(r,c),stroke:'#eee'});}
// one per client, or the end of what was just drawn: steps, not lines
 var quiet={'server-down':1,'server-back':1,'hook-end':1};
 r.faults.forEach(function(f){if(quiet[f[1]]||f[0]>U)return;el('line',{x1:x(f[0]),x2:x(f[0]),y1:r.top-(multi?8:0),y2:multi?r.low:H-40,stroke:'#888','stroke-dasharray':'6 5'});});
 if(r.agg)drawStretches(r);
 r.sec.forEach(function(s){var h=18;if(s[1]>U)return;var e=Math.min(s[2],U),rl=Math.min(s[3],U);
  el('rect',{x:x(s[1]),y:y(r,s[0])-h/2,width:Math.max(1.5,x(e)-x(s[1])),height:h,fill:PAL.inside,'class':'sec'});if(rl>e+0.001)el('rect',{x:x(e),y:y(r,s[0])-4,width:x(rl)-x(e),height:8,fill:PAL.releasing,'class':'sec'});});
 overlapping(r.sec,function(s,o,a,b){if(a>=U)return;b=Math.min(b,U);[s,o].forEach(function(q){el('rect',{x:x(a),y:y(r,q[0])-9,width:Math.max(1.5,x(b)-x(a)),height:18,fill:PAL.overlap,'class':'sec'});});});
// marks: lease expired (x), killed (dot), deleted another's lock (triangle)
 r.sec.forEach(function(s){var c=y(r,s[0]);
  var m7=7*MK,m8=8*MK,m14=14*MK;
  if(s[7]!==null&&s[2]>s[7]&&s[7]<=U){var X=x(s[7]);el('path',{d:'M'+(X-m7)+' '+(c-m7)+'l'+m14+' '+m14+'m0 -'+m14+'l-'+m14+' '+m14,stroke:'#000','stroke-width':2.5*MK,'class':'mark'});}
  if(s[4]==='killed'&&s[2]<=U)el('circle',{cx:x(s[2]),cy:c,r:m8,fill:PAL.killed,stroke:'#fff','stroke-width':1.5,'class':'mark'});
  if(s[4]==='foreign'&&s[3]<=U){var X2=x(s[3]);el('path',{d:'M'+(X2-m8)+' '+(c+16*MK)+'l'+m8+' -'+m14+'l'+m8+' '+m14+'z',fill:PAL.foreign,'class':'mark'});}});
// what a client met: a stale read or write the fenced resource refused (a
// red ring with a bar), a write aborted on a lost lease (a hollow square)
 (r.marks||[]).forEach(function(m){if(m[2]<0||m[2]>=r.clients||m[0]>U)return;var X=x(m[0]),c=y(r,m[2]),k=MK;
  if(m[1]==='refused'){el('circle',{cx:X,cy:c-17*k,r:7*k,fill:'#fff',stroke:PAL.overlap,'stroke-width':2.5,'class':'mark mark-refused'});
   el('path',{d:'M'+(X-5*k)+' '+(c-12*k)+'l'+10*k+' -'+10*k,stroke:PAL.overlap,'stroke-width':2.5});}
  else el('rect',{x:X-6*k,y:c-23*k,width:12*k,height:12*k,fill:'#fff',stroke:'#222','stroke-width':2,'class':'mark mark-aborted'});});
// a lease a server ended while its holder was inside: an orange bar under its
// lane from that end to the holder's notice (or its exit, never told), with the lag
 (r.lags||[]).forEach(function(g){if(g[0]<0||g[0]>=r.clients||g[1]>U)return;var c=y(r,g[0]),b=Math.min(g[2]===null?g[3]:g[2],U);
  var bar=el('rect',{x:x(g[1]),y:c+11,width:Math.max(1.5,x(b)-x(g[1])),height:6,fill:PAL.foreign,'class':'mark-notice-lag'});
  var tip=document.createElementNS(NS,'title');tip.textContent=g[2]===null?'lease ended by the server, holder never told':'lease ended by the server; holder told '+Math.round((g[2]-g[1])*1000)+' ms later';bar.appendChild(tip);});
// fault labels in rows above the block (layout())
 labels(r);
 if(r.NL){el('text',{x:L-12,y:r.top+LANE*r.clients+22,'text-anchor':'end','font-size':fs(16),fill:'#555'},'held on:');
  for(var n=0;n<r.NL;n++){el('text',{x:L-12,y:ny(r,n)+6,'text-anchor':'end','font-size':18},'node '+n);
   el('line',{x1:L,x2:W-R,y1:ny(r,n),y2:ny(r,n),stroke:'#eee'});}
  r.sec.forEach(function(s){if(s[1]>U)return;holds(s).forEach(function(n){var a=s[1],b=Math.min(s[3],U),q=restartOf(r,n,a,b);
   el('rect',{x:x(a),y:ny(r,n)-8,width:Math.max(1.5,x(q===null?b:q)-x(a)),height:16,fill:COL[s[0]%8]});
   if(q!==null)el('rect',{x:x(q),y:ny(r,n)-8,width:Math.max(1.5,x(b)-x(q)),height:16,fill:'none',stroke:COL[s[0]%8],'stroke-dasharray':'4 3'});});});
  for(var c2=0;c2<r.clients;c2++)el('rect',{x:L-140,y:y(r,c2)-6,width:12,height:12,fill:COL[c2%8]});}});
RS.forEach(drawRedis);
cur=el('line',{x1:L,x2:L,y1:T-10,y2:H-40,stroke:'#e0b000','stroke-width':4,id:'cursor'});}
// a page of runs: the legend, each mark drawn as on the chart, above the key's sentences
if(!deck){var kp0=document.querySelector('p.keys:not(.legend-done)');if(kp0){kp0.classList.add('legend-done');kp0.parentNode.insertBefore(legend(),kp0);}}
var items=document.querySelectorAll('#story li'),i=-1;
// the buttons and the timeline stay on screen while the story scrolls,
// when the timeline leaves room for it
var pin=document.getElementById('pin');if(multi)document.getElementById('held').classList.add('cols');
// a compare page: the step's sentence above the timeline, kept in view
if(multi)pin.insertBefore(document.getElementById('now'),svg);
function pinned(){var on=pin.offsetHeight<innerHeight*0.68;pin.classList.toggle('pinned',on);
 items.forEach(function(li){li.style.scrollMarginTop=on?(pin.offsetHeight+12)+'px':'';});}
function paused(r,c,t){var p=false;r.faults.forEach(function(f){if(f[0]<=t&&f[2]===c){if(f[1]==='pause')p=true;if(f[1]==='resume'||f[1]==='kill')p=false;}});return p;}
function who(r,t){var out=[],pre=multi?r.label+': ':'';r.sec.forEach(function(s){var a=s[0];
 if(s[1]<=t&&t<s[2]){var w=pre+lane(r,a)+' is inside since '+s[1].toFixed(3)+' s';
  if(s[7]!==null&&t>s[7])w+=', its lease ran out at '+s[7].toFixed(3)+' s';
  if(s[6]){var hn=holds(s),gone=hn.filter(function(n){return restartOf(r,n,s[1],t)!==null;});
   w+=', holding nodes '+hn.join(', ');if(gone.length)w+=' (node'+(gone.length>1?'s ':' ')+gone.join(', ')+
   ' restarted empty since, so only '+(hn.length-gone.length)+' of '+r.nodes+' nodes still know it)';}
  if(paused(r,a,t))w+=' (frozen)';out.push(w);}
 else if(s[2]<=t&&t<s[3])out.push(pre+lane(r,a)+' has left its section and is still releasing');});
 var rw=redisWho(r,t,pre,out.length);if(multi&&!out.length)out.push(pre+(rw.length?'no client is in its critical section':'nobody holds the lock'));return out.concat(rw);}
function show(k){if(!items.length)return;i=Math.max(0,Math.min(items.length-1,k));
 var t=+items[i].dataset.t,r=RS[+items[i].dataset.run];items.forEach(function(li,j){li.classList.toggle('current',j===i);});
 if(CL)classroom(t);
 axis(t);
 cur.setAttribute('x1',x(t));cur.setAttribute('x2',x(t));
 document.getElementById('t').textContent=t.toFixed(3);
 document.getElementById('pos').textContent='step '+(i+1)+' of '+items.length;
 var w=[],ul=document.getElementById('held');RS.forEach(function(q){if(!q.hide)w=w.concat(who(q,t));});ul.innerHTML='';
 (w.length?w:['nobody holds the lock']).forEach(function(s){var li=document.createElement('li');li.textContent=s;ul.appendChild(li);});
 document.getElementById('inside').textContent=String(who(r,t).filter(function(s){return s.indexOf(' is inside')>=0;}).length);
 document.getElementById('inrun').textContent=multi?' in '+r.label:'';
 if(!CL)document.getElementById('now').innerHTML=items[i].innerHTML;
// the story scrolls under the pinned timeline; an unpinned page stays put
// (the classroom view: the lesson bar, or in presenter mode the buttons, at the top)
 if(CL)scrollTo(0,present?0:scrollY+document.getElementById('lessonbar').getBoundingClientRect().top);
 else pinned();if(pin.classList.contains('pinned'))items[i].scrollIntoView({block:'nearest'});
 else if(multi&&show.moved)document.getElementById('now').scrollIntoView({block:'nearest'});show.moved=true;
 history.replaceState(null,'','#'+(present?'present&':'')+(zoom&&!present?'zoom&':'')+'step='+(i+1));fit();}
// in a deck: past the last step, the next lesson; before the first, the previous
// one; only the lesson on screen answers (each lesson's keys listener stays)
if(deck){var show0=show,me={n:0,draw:function(){drawn='';show0(i);}};deck.page=me;show=function(k){if(deck.page!==me)return;var first=!me.n++;
 if(!first&&k===i+1&&i>=items.length-1)return deck.go(1,0);if(!first&&k===i-1&&i<=0)return deck.go(-1,1e6);
 show0(k);history.replaceState(null,'','#lesson='+(deck.k+1)+'&step='+(i+1));};}
document.getElementById('next').onclick=function(){show(i+1);};
document.getElementById('prev').onclick=function(){show(i-1);};
document.addEventListener('keydown',function(e){if(e.key==='ArrowRight'||e.key==='n'){show(i+1);e.preventDefault();}
 else if(e.key==='ArrowLeft'||e.key==='p'){show(i-1);e.preventDefault();}});
// zoom (key z, the zoom button): the window around each step, and back;
// presenter mode (key f, the button, #present): one step per screen, large
// type, zoomed where that helps; Escape leaves it. #slides lays every step
// out as a page of its own, for printing (lockbench report --slides).
var drawn='';
// presenter mode: the sentence as large as fits with the timeline
function fit(){var n=document.getElementById('now');n.style.fontSize='';if(CL||!present||document.body.classList.contains('slides'))return;
 for(var px=34;px>16&&Math.max(n.getBoundingClientRect().bottom,svg.getBoundingClientRect().bottom)>innerHeight;px-=2)n.style.fontSize=px+'px';}
function axis(t){var w=zoom?win(t):[0,end];if(!(w[1]>w[0]))w=[0,end];var k=w.join()+present+(CL?'/'+i+allRuns+innerWidth+'x'+innerHeight:'');if(k===drawn)return;A0=w[0];A1=w[1];drawn=k;draw();}
// the classroom view at step i (time @t): its run alone, drawn up to @t (the
// run's last step draws all of it, and its class), the sentence set first
// (the chart takes the room it leaves), the step's line of code marked, the
// lesson's figures shown from its last step on
function classroom(t){var li=items[i],nx=items[i+1],ri=+li.dataset.run;focus=ri;
 var last=!nx||+nx.dataset.run!==ri;U=last&&li.className!=='question'?Infinity:t;
 if(deck.whole!==undefined){focus=deck.whole;U=Infinity;} // printing: that run, whole
 document.body.classList.toggle('revealed',i===items.length-1);document.body.classList.toggle('asking',li.className==='question');
 var now=document.getElementById('now');now.innerHTML=li.innerHTML;
 if(deck&&deck.code)deck.code(li.className==='question'?'':li.textContent,ri);
 document.getElementById('inrun').textContent=multi?' in '+RS[ri].label:'';}
function setZoom(on){zoom=on;document.body.dataset.zoom=on?'1':'';document.getElementById('zoom').textContent=on?'whole run':'zoom';drawn='';show(i);}
function setPresent(on){if(on===present)return;present=on;document.body.classList.toggle('present',on);
 document.getElementById('present').textContent=on?'leave presenter':'presenter';
 if(on){setPresent.zoom=zoom;zoom=true;scrollTo(0,0);}else zoom=!!setPresent.zoom;setZoom(zoom);}
document.getElementById('zoom').onclick=function(){if(drawn==='stretch'){drawn='';show(i);if(!zoom)this.textContent='zoom';return;}setZoom(!zoom);};
document.getElementById('present').onclick=function(){setPresent(!present);};
document.addEventListener('keydown',function(e){if(e.ctrlKey||e.altKey||e.metaKey||deck&&deck.page!==me)return;
 if(e.key==='z'){if(drawn==='stretch')document.getElementById('zoom').onclick();else setZoom(!zoom);e.preventDefault();}else if(e.key==='f'){setPresent(!present);e.preventDefault();}
 else if(e.key==='Escape'&&present){setPresent(false);e.preventDefault();}
 else if(e.key==='a'&&CL){allRuns=!allRuns;drawn='';show(i);e.preventDefault();}});
function slides(){var box=document.createElement('div');box.id='slides';present=true;zoom=true;document.body.classList.add('present');
 for(var k=0;k<items.length;k++){show(k);var sec=document.createElement('section'),h=document.createElement('p');h.className='slide-pos';
  h.textContent=document.getElementById('pos').textContent+' \u00b7 '+document.getElementById('t').textContent+' s';
  var g=svg.cloneNode(true);g.removeAttribute('id');g.querySelector('#cursor').removeAttribute('id');
  g.querySelector('clipPath').id='plotclip'+k;g.querySelector('g[clip-path]').setAttribute('clip-path','url(#plotclip'+k+')');var nw=document.getElementById('now').cloneNode(true);nw.removeAttribute('id');nw.className='now';nw.style.fontSize='';
  sec.appendChild(h);sec.appendChild(g);sec.appendChild(nw);box.appendChild(sec);}
 document.body.appendChild(box);document.body.classList.add('slides');
// a long sentence smaller, so that each page holds its whole step
 box.querySelectorAll('section').forEach(function(sec){var n=sec.querySelector('.now');
  for(var px=30;px>14&&sec.scrollHeight>sec.clientHeight;px-=2)n.style.fontSize=px+'px';});}
var m=/step=(\d+)/.exec(location.hash);
// (a deck's next lesson keeps the mode the last one was in)
if(/(^#|&)zoom/.test(location.hash)||document.body.dataset.zoom)zoom=true;
if(/(^#|&)present/.test(location.hash)||document.body.classList.contains('present')){present=true;zoom=true;document.body.classList.add('present');document.getElementById('present').textContent='leave presenter';}
if(/(^#|&)slides/.test(location.hash))slides();
show(m?+m[1]-1:0);if(zoom)document.getElementById('zoom').textContent='whole run';
}
// the timeline's marks, each drawn as on the chart, with what it means
function legend(){var NS='http://www.w3.org/2000/svg',g=document.createElementNS(NS,'svg'),rows=[
 ['rect',PAL.inside,'inside its critical section'],['red',PAL.overlap,'two or more clients inside at once'],
 ['pale',PAL.releasing,'out of its section, still releasing'],['x','#000','its lease ran out while it was inside'],
 ['dot',PAL.killed,'killed'],['tri',PAL.foreign,'a release that deleted another client\u2019s lock (a foreign release)'],
 ['ring',PAL.overlap,'a stale read or write the fenced resource refused'],['sq','#222','a write aborted: the lock said its lease was gone'],
 ['dash','#888','a fault (named above the lanes)'],['cur','#e0b000','the step shown'],
 ['hatch',PAL.clients[0],'Redis holds the key: its owner\u2019s colour (as the square by its name), cN; hatched: no TTL'],
 ['rect',PAL.noOwner,'Redis holds a value no client entered with (nobody inside holds the lock)']];
 g.setAttribute('viewBox','0 0 1100 '+(rows.length*40+10));g.setAttribute('class','legend');g.setAttribute('role','img');g.setAttribute('aria-label','legend');
 function e(n,a){var x=document.createElementNS(NS,n);for(var k in a)x.setAttribute(k,a[k]);g.appendChild(x);return x;}
 rows.forEach(function(r,k){var Y=k*40+25,c=r[1];
  if(r[0]==='rect'||r[0]==='red')e('rect',{x:10,y:Y-9,width:60,height:18,fill:c});
  if(r[0]==='pale')e('rect',{x:10,y:Y-4,width:60,height:8,fill:c});
  if(r[0]==='x')e('path',{d:'M30 '+(Y-10)+'l20 20m0 -20l-20 20',stroke:c,'stroke-width':3.5});
  if(r[0]==='dot')e('circle',{cx:40,cy:Y,r:11,fill:c});
  if(r[0]==='tri')e('path',{d:'M29 '+(Y+10)+'l11 -20l11 20z',fill:c});
  if(r[0]==='ring'){e('circle',{cx:40,cy:Y,r:10,fill:'#fff',stroke:c,'stroke-width':3});e('path',{d:'M33 '+(Y+7)+'l14 -14',stroke:c,'stroke-width':3});}
  if(r[0]==='sq')e('rect',{x:31,y:Y-9,width:18,height:18,fill:'#fff',stroke:c,'stroke-width':2.5});
  if(r[0]==='dash')e('line',{x1:40,x2:40,y1:Y-16,y2:Y+16,stroke:c,'stroke-dasharray':'6 5','stroke-width':2});
  if(r[0]==='cur')e('line',{x1:40,x2:40,y1:Y-16,y2:Y+16,stroke:c,'stroke-width':5});
  if(r[0]==='hatch'){e('rect',{x:10,y:Y-8,width:60,height:16,fill:c});for(var h=14;h<70;h+=8)e('line',{x1:h,x2:h+6,y1:Y+8,y2:Y-8,stroke:'#fff','stroke-width':2.5,'stroke-opacity':0.75});}
  var tx=e('text',{x:90,y:Y+7,'font-size':20});tx.textContent=r[2];});
 return g;}
// A tour's deck (lockbench tour): D.lessons in teaching order, each
// {title, watch, page, runs, figs}, one at a time in the stepper above. The
// contents, the picker and the lesson buttons open one; stepping past a
// lesson's last step opens the next (#lesson=K&step=N). Text as text.
function lbDeck(D){var LS=D.lessons,deck={k:0},pick=document.getElementById('pick');
 document.body.classList.add('classroom');
 var lang=0,LANGS=['Redis commands','redis-py','node-redis'];
 // the code of lesson @L: the wrong recipe and its fix in one language (the
 // buttons pick it), the line where it breaks marked; why the fix works; the
 // speaker notes, in the timeline's box (shown in presenter mode)
 function code(L){var box=document.getElementById('code'),pin=document.getElementById('pin'),why=document.getElementById('why');
  pin.parentNode.insertBefore(box,pin.nextSibling);box.parentNode.insertBefore(why,box.nextSibling);box.textContent='';
  why.textContent=L.why?'Why the fix works, and what it does not fix: '+L.why:'';
  var nb=document.getElementById('notes');if(!nb){nb=document.createElement('div');nb.id='notes';}
  pin.insertBefore(nb,document.getElementById('who'));nb.textContent=L.notes?'Speaker notes: '+L.notes:'';
  if(!L.code)return;
  var bar=document.createElement('div');bar.className='langs';box.appendChild(bar);
  LANGS.forEach(function(n,k){var b=document.createElement('button');b.textContent=n;b.className=k===lang?'on':'';
   b.onclick=function(){lang=k;code(L);deck.code(deck.said[0],deck.said[1]);};bar.appendChild(b);});
  var cols=document.createElement('div');cols.className='cols';box.appendChild(cols);
  ['The recipe as written ('+L.runs[0].label+')','The fix'].forEach(function(h,w){var d=document.createElement('div'),t=document.createElement('h3'),pre=document.createElement('pre');
   t.textContent=h;d.appendChild(t);L.code[lang][w].split('\n').forEach(function(ln){var sp=document.createElement('span');
    if(ln[0]==='>'){sp.className='breaks';ln=ln.slice(1);}sp.textContent=ln||' ';pre.appendChild(sp);});
   d.appendChild(pre);cols.appendChild(d);});
  // a step of the first run that tells the break marks its line, also under the step's sentence
  deck.code=function(said,ri){deck.said=[said,ri];var on=!!(L.breaks&&ri===0&&said.indexOf(L.breaks)>=0);
   document.body.classList.toggle('broken',on);if(!on)return;
   var line=(L.code[lang][0].split('\n').filter(function(l){return l[0]==='>';})[0]||'').slice(1);if(!line)return;
   var d=document.createElement('div'),c=document.createElement('code');d.className='breakline';
   d.textContent='The line that breaks ('+LANGS[lang]+'): ';c.textContent=line.trim();d.appendChild(c);document.getElementById('now').appendChild(d);};}
 var HEAD=['run','scenario','sections','overlaps','foreign releases','lost updates','outcome'];
 function text(id,s){document.getElementById(id).textContent=s;}
 function row(tb,cells,tag){var tr=document.createElement('tr');cells.forEach(function(v){var c=document.createElement(tag);c.textContent=v;tr.appendChild(c);});tb.appendChild(tr);}
 function open(n,step,stay){n=Math.max(0,Math.min(LS.length-1,n));var L=LS[n];deck.k=n;
  text('story','');text('tl','');document.getElementById('held').className='';
  text('ltitle',(n+1)+'. '+L.title);text('lwatch',L.watch);text('lpage',L.page);
  text('lpos','lesson '+(n+1)+' of '+LS.length);pick.value=String(n);
  document.querySelectorAll('#toc li').forEach(function(li,j){li.classList.toggle('current',j===n);});
  var tb=document.getElementById('lfig');tb.textContent='';row(tb,HEAD,'th');L.figs.forEach(function(f){row(tb,f,'td');});
  code(L);history.replaceState(null,'','#lesson='+(n+1)+'&step='+(step+1));lbPage(L,deck);
  if(!stay)document.getElementById('lessonbar').scrollIntoView({block:'start'});}
 deck.go=function(d,step){if(deck.k+d>=0&&deck.k+d<LS.length)open(deck.k+d,step);};
 function fromHash(){var l=/lesson=(\d+)/.exec(location.hash),s=/step=(\d+)/.exec(location.hash);
  open(l?+l[1]-1:0,s?+s[1]-1:0,!l);}
 pick.onchange=function(){open(+pick.value,0);};
 document.getElementById('lprev').onclick=function(){deck.go(-1,0);};
 document.getElementById('lnext').onclick=function(){deck.go(1,0);};
 window.addEventListener('hashchange',fromHash);
 var kp=document.querySelector('p.keys');kp.parentNode.insertBefore(legend(),kp);
 if(/^#print/.test(location.hash))printDeck();else fromHash();
 // lockbench tour --pdf: a title page, the legend, a page per lesson (its
 // question, code and why) and one per run (drawn whole), then the handout
 function page(cls,title){var sec=document.createElement('section');sec.className=cls;if(title){var h=document.createElement('h2');h.textContent=title;sec.appendChild(h);}
  document.getElementById('slides').appendChild(sec);return sec;}
 function para(sec,tag,txt,cls){var e=document.createElement(tag);e.textContent=txt;if(cls)e.className=cls;sec.appendChild(e);return e;}
 function printDeck(){var box=document.createElement('div');box.id='slides';document.body.appendChild(box);document.body.classList.add('printing');
  var t=page('title');para(t,'h1','lockbench tour');para(t,'p','Distributed locks: the classic mistakes, each beside its fix under the same fault, in teaching order.','sub');
  var ol=document.createElement('ol');LS.forEach(function(L){para(ol,'li',L.title);});t.appendChild(ol);para(t,'p',D.source||'','src');
  page('legend','How to read the timeline').appendChild(legend());
  LS.forEach(function(L,n){open(n,0,true);var p=page('lesson',(n+1)+'. '+L.title);para(p,'p','Predict: '+L.question,'q');
   LANGS.forEach(function(nm,k){lang=k;code(L);var c=document.getElementById('code').cloneNode(true);c.removeAttribute('id');c.className='code';
    var lb=c.querySelector('.langs');if(lb)lb.parentNode.removeChild(lb);c.querySelectorAll('h3').forEach(function(h){h.textContent+=', '+nm;});p.appendChild(c);});lang=0;code(L);
   para(p,'p','Why the fix works, and what it does not fix: '+(L.why||''),'why');
   L.runs.forEach(function(r,ri){deck.whole=ri;deck.page.draw();var q=page('run',(n+1)+'. '+L.title+': '+r.label+' ('+(ri+1)+' of '+L.runs.length+')');
    var g=document.getElementById('tl').cloneNode(true);g.removeAttribute('id');var cu=g.querySelector('#cursor');if(cu)cu.parentNode.removeChild(cu);
    var cp=g.querySelector('clipPath');if(cp){cp.id='clip'+n+'-'+ri;g.querySelector('g[clip-path]').setAttribute('clip-path','url(#clip'+n+'-'+ri+')');}
    q.appendChild(g);para(q,'p','Observed: '+(r.observed||'?')+'. '+(L.figs[ri]?'Sections '+L.figs[ri][2]+', overlaps '+L.figs[ri][3]+', foreign releases '+L.figs[ri][4]+', lost updates '+L.figs[ri][5]+' (this run, summary.csv).':''),'fig');});
   deck.whole=undefined;});
  var h=page('handout','lockbench: a handout');var cols=document.createElement('div');cols.className='cols';h.appendChild(cols);
  var a=document.createElement('div');para(a,'h3','The lessons');var lo=document.createElement('ol');
  LS.forEach(function(L){var li=para(lo,'li','');para(li,'b',L.title+'. ');li.appendChild(document.createTextNode(L.why||''));});a.appendChild(lo);cols.appendChild(a);
  var b=document.createElement('div');para(b,'h3','Glossary');var dl=document.createElement('dl');
  (D.glossary||[]).forEach(function(gt){para(dl,'dt',gt[0]);para(dl,'dd',gt[1].replace(/`/g,''));});b.appendChild(dl);cols.appendChild(b);
  para(h,'p','Run it: make tour (the deck), lockbench tour --live (afresh), lockbench compare --scenario holder-pause --strategies set-nx-px,fenced.','src');}
}
(function(){var D=JSON.parse(document.getElementById('data').textContent);if(D.lessons)lbDeck(D);else lbPage(D);})();
